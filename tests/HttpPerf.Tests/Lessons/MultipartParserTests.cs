using System.Security.Cryptography;
using System.Text;
using HttpPerf.ServiceDefaults.Selection;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http.HttpResults;
using Microsoft.AspNetCore.Http;
using Uploads.Api.Reader;
using Uploads.Api.Storage;
using Uploads.Api;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.Tests.Infrastructure;
using UploadReceipt = Uploads.Api.Storage.UploadReceipt;

namespace HttpPerf.Tests.Lessons;

/// <summary>
/// The optimized rung's hand-written multipart parser against the streaming rung's <c>MultipartReader</c>, in
/// process: the real handler, readers and store on a temp folder, the body handed over in chunks of every shape
/// (split at every offset, random sizes, one byte at a time). Each outcome must be the streaming rung's: the same
/// receipts and stored bytes, or the same problem (status and title), and no folder left in progress.
/// </summary>
[Trait(Kind.Name, Kind.Lessons)]
[Lesson(Pitfalls.UploadsReader)]
public sealed class MultipartParserTests : IAsyncLifetime
{
    private const string Boundary = "----parser-test-boundary";
    private const int MaxFileBytes = 200_000;

    private TempUploadStore _temp = null!;

    /// <summary>What a request got: the stored files (name, type, bytes) or the problem.</summary>
    private sealed record Outcome(int Status, string Answer);

    public async ValueTask InitializeAsync() =>
        _temp = await TempUploadStore.StartAsync("multipart-parser-", o => (o.MaxFileBytes, o.InstanceId) = (MaxFileBytes, "parser-tests"));

    public ValueTask DisposeAsync()
    {
        _temp.Dispose();
        return ValueTask.CompletedTask;
    }

    [Fact]
    public async Task A_delimiter_split_across_two_reads_at_every_offset_reads_as_one()
    {
        var body = Body(Field("note", "a plain field"), File("a.bin", "application/octet-stream", Bytes(1, 300)), File("b.txt", "text/plain", Bytes(2, 40)));
        var expected = await StreamingAsync(body);
        Assert.Equal(201, expected.Status);

        for (var split = 1; split < body.Length; split++)
        {
            Assert.Equal(expected, await OptimizedAsync(body, [split, body.Length - split]));
        }
    }

    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    [InlineData(3)]
    public async Task Random_chunk_sizes_and_one_byte_at_a_time_store_the_same_bytes(int seed)
    {
        var random = new Random(seed);
        var tricky = TrickyContent(random);
        var body = Body(File("tricky.bin", "application/octet-stream", tricky), File("empty.bin", "application/octet-stream", []), File("big.bin", "application/octet-stream", Bytes(seed, 150_000)));
        var expected = await StreamingAsync(body);
        Assert.Equal(201, expected.Status);

        Assert.Equal(expected, await OptimizedAsync(body, Chunks(random, body.Length, max: 1)));
        for (var run = 0; run < 20; run++)
        {
            Assert.Equal(expected, await OptimizedAsync(body, Chunks(random, body.Length, max: 1 + random.Next(70_000))));
        }
    }

    public static TheoryData<string> Corpus() => [.. Bodies.Keys];

    [Theory]
    [MemberData(nameof(Corpus))]
    public async Task Each_body_of_the_corpus_gets_the_streaming_rungs_answer_in_any_chunking(string name)
    {
        var (contentType, body) = Bodies[name](new Random(name.Length));
        var expected = await StreamingAsync(body, contentType);
        Assert.NotEqual(500, expected.Status);

        var random = new Random(name.Length * 7919 + name[0]);
        Assert.Equal(expected, await OptimizedAsync(body, [body.Length], contentType));
        Assert.Equal(expected, await OptimizedAsync(body, Chunks(random, body.Length, max: 1), contentType));
        for (var run = 0; run < 5; run++)
        {
            Assert.Equal(expected, await OptimizedAsync(body, Chunks(random, body.Length, max: 1 + random.Next(5_000)), contentType));
        }
    }

    [Fact]
    public void The_delimiter_search_finds_it_across_any_seam()
    {
        var delimiter = Encoding.ASCII.GetBytes("\r\n--" + Boundary);
        var data = new byte[300];
        delimiter.CopyTo(data, 150);
        for (var first = 1; first < data.Length; first++)
        {
            for (var second = first + 1; second < Math.Min(data.Length, first + delimiter.Length + 2); second++)
            {
                var sequence = Segments.Of(data[..first], data[first..second], data[second..]);
                Assert.Equal(150, MultipartBodyParser.IndexOf(sequence, delimiter));
            }
        }

        Assert.Equal(-1, MultipartBodyParser.IndexOf(Segments.Of(data[..150], data[151..]), delimiter));
    }

    /// <summary>Hand-made bodies: line-ending edge cases, limits, refusals, and the malformed-input run's broken multipart.</summary>
    private static readonly Dictionary<string, Func<Random, (string ContentType, byte[] Body)>> Bodies = new()
    {
        ["a preamble and an epilogue"] = _ => Plain($"preamble line\r\n--{Boundary}\r\n{Head("p.txt")}\r\n\r\nhello\r\n--{Boundary}--\r\nepilogue"),
        ["an epilogue over 16 KB"] = _ => Plain($"--{Boundary}\r\n{Head("p.txt")}\r\n\r\nhello\r\n--{Boundary}--\r\n{new string('e', 17_000)}"),
        ["a preamble over 16 KB"] = _ => Plain($"{new string('p', 17_000)}\r\n--{Boundary}\r\n{Head("p.txt")}\r\n\r\nhello\r\n--{Boundary}--\r\n"),
        ["the closing delimiter is the last byte"] = _ => Plain($"--{Boundary}\r\n{Head("p.txt")}\r\n\r\nhello\r\n--{Boundary}--"),
        ["whitespace after the delimiters"] = _ => Plain($"--{Boundary} \t \r\n{Head("p.txt")}\r\n\r\nhello\r\n--{Boundary}  --  \r\n"),
        ["garbage after a delimiter"] = _ => Plain($"--{Boundary}xyz\r\n{Head("p.txt")}\r\n\r\nhello\r\n--{Boundary}--\r\n"),
        ["LF-only line endings"] = _ => Plain($"--{Boundary}\n{Head("p.txt", "\n")}\n\nhello\n--{Boundary}--\n"),
        ["LF-only headers, CRLF delimiters"] = _ => Plain($"--{Boundary}\r\n{Head("p.txt", "\n")}\n\nhello\r\n--{Boundary}--\r\n"),
        ["LF before the closing delimiter"] = _ => Plain($"--{Boundary}\r\n{Head("p.txt")}\r\n\r\nhello\n--{Boundary}--\r\n"),
        ["CR alone in headers"] = _ => Plain($"--{Boundary}\r\n{Head("p.txt", "\r")}\r\r\nhello\r\n--{Boundary}--\r\n"),
        ["a delimiter without its CRLF inside the file"] = _ => Plain($"--{Boundary}\r\n{Head("p.txt")}\r\n\r\nx--{Boundary}\n--{Boundary}--\r\n\r--{Boundary}\r\n--{Boundary}--\r\n"),
        ["the delimiter's prefixes inside the file"] = _ => Plain($"--{Boundary}\r\n{Head("p.txt")}\r\n\r\n\r\n-\r\n--\r\n--{Boundary[..10]}\r\n--{Boundary[..^1]}\r\n--{Boundary}--\r\n"),
        ["the body ends inside the closing delimiter"] = _ => Plain($"--{Boundary}\r\n{Head("p.txt")}\r\n\r\nhello\r\n--{Boundary}-"),
        ["the body ends right after a delimiter"] = _ => Plain($"--{Boundary}\r\n{Head("p.txt")}\r\n\r\nhello\r\n--{Boundary}"),
        ["the body ends after a delimiter's CRLF"] = _ => Plain($"--{Boundary}\r\n{Head("p.txt")}\r\n\r\nhello\r\n--{Boundary}\r\n"),
        ["the body ends in the headers"] = _ => Plain($"--{Boundary}\r\n{Head("p.txt")}"),
        ["only a closing delimiter"] = _ => Plain($"--{Boundary}--\r\n"),
        ["an empty body"] = _ => Plain(""),
        ["a header without a colon"] = _ => Plain($"--{Boundary}\r\n{Head("p.txt")}\r\nno colon here\r\n\r\nhello\r\n--{Boundary}--\r\n"),
        ["17 headers"] = _ => Plain($"--{Boundary}\r\n{Head("p.txt")}\r\n{string.Concat(Enumerable.Range(0, 15).Select(i => $"X-H{i}: v\r\n"))}\r\nhello\r\n--{Boundary}--\r\n"),
        ["a header line over 16 KB"] = _ => Plain($"--{Boundary}\r\n{Head("p.txt")}\r\nX-Long: {new string('h', 17_000)}\r\n\r\nhello\r\n--{Boundary}--\r\n"),
        ["a delimiter line over 100 bytes"] = _ => Plain($"--{Boundary}{new string(' ', 120)}\r\n{Head("p.txt")}\r\n\r\nhello\r\n--{Boundary}--\r\n"),
        ["a filename* name"] = _ => Plain($"--{Boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename*=UTF-8''caf%C3%A9.txt\r\nContent-Type: text/plain\r\n\r\nhello\r\n--{Boundary}--\r\n"),
        ["a section with no headers"] = _ => Plain($"--{Boundary}\r\n\r\nnot a file\r\n--{Boundary}\r\n{Head("p.txt")}\r\n\r\nhello\r\n--{Boundary}--\r\n"),
        ["no file name"] = _ => Plain($"--{Boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"\"\r\n\r\nhello\r\n--{Boundary}--\r\n"),
        ["a path as file name"] = _ => Plain($"--{Boundary}\r\n{Head("../../etc/passwd")}\r\n\r\nhello\r\n--{Boundary}--\r\n"),
        ["a disallowed type"] = _ => Plain($"--{Boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"setup.exe\"\r\nContent-Type: application/x-msdownload\r\n\r\nMZ\r\n--{Boundary}--\r\n"),
        ["too many files"] = _ => ($"multipart/form-data; boundary={Boundary}", Body([.. Enumerable.Range(0, 11).Select(i => File($"{i}.bin", "application/octet-stream", [(byte)i]))])),
        ["a file over the limit"] = r => ($"multipart/form-data; boundary={Boundary}", Body(File("big.bin", "application/octet-stream", Bytes(r.Next(), MaxFileBytes + 1)))),
        ["a file over the limit after a good one"] = r => ($"multipart/form-data; boundary={Boundary}", Body(File("ok.bin", "application/octet-stream", Bytes(1, 1000)), File("big.bin", "application/octet-stream", Bytes(r.Next(), MaxFileBytes + 1)))),
        ["malformed run: the header's boundary differs from the body's"] = r => ("multipart/form-data; boundary=other-boundary", Body(File("ok.bin", "application/octet-stream", Bytes(r.Next(), 2_000)))),
        ["malformed run: no closing boundary"] = r => ($"multipart/form-data; boundary={Boundary}", Body([File("ok.bin", "application/octet-stream", Bytes(r.Next(), 2_000))], closed: false)),
        ["malformed run: a boundary over 70 characters"] = r => ($"multipart/form-data; boundary={new string('b', 71 + r.Next(200))}", Body(File("ok.bin", "application/octet-stream", Bytes(r.Next(), 2_000)))),
        ["malformed run: garbage instead of parts"] = r => ($"multipart/form-data; boundary={Boundary}", Bytes(r.Next(), 1 + r.Next(5_000))),
        ["malformed run: part headers never end"] = _ => Plain($"--{Boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"x.bin\"\r\n" + new string('h', 20_000)),
        ["malformed run: truncated body"] = r =>
        {
            var body = Body([File("cut.bin", "application/octet-stream", Bytes(r.Next(), 50_000))]);
            return ($"multipart/form-data; boundary={Boundary}", body[..r.Next(1, body.Length - 1)]);
        },
    };

    private async Task<Outcome> StreamingAsync(byte[] body, string contentType = $"multipart/form-data; boundary={Boundary}") =>
        await UploadAsync(new StreamingUploadReader(_temp.Rules, _temp.Store), body, [body.Length], contentType);

    private async Task<Outcome> OptimizedAsync(byte[] body, IReadOnlyList<int> chunks, string contentType = $"multipart/form-data; boundary={Boundary}") =>
        await UploadAsync(new PipeUploadReader(_temp.Rules), body, chunks, contentType);

    /// <summary>The real handler on a request whose body arrives in <paramref name="chunks"/>; then nothing may be left in progress.</summary>
    private async Task<Outcome> UploadAsync(IUploadReader reader, byte[] body, IReadOnlyList<int> chunks, string contentType)
    {
        var context = new DefaultHttpContext();
        context.Request.Method = "POST";
        context.Request.ContentType = contentType;
        context.Request.Body = new ChunkedStream(body, chunks);
        var result = (await UploadsApi.Upload(context, reader, _temp.Store, _temp.Rules, new UploadMetrics(), new RequestVariants(), Cancel)).Result;

        Assert.Empty(Directory.GetDirectories(_temp.Incoming("parser-tests")));
        switch (result)
        {
            case Created<IReadOnlyList<UploadReceipt>> created:
                var files = created.Value!.Select(r =>
                    $"{r.FileName} {r.ContentType} {r.Size} {r.Sha256} {Convert.ToHexStringLower(SHA256.HashData(System.IO.File.ReadAllBytes(_temp.Store.DataPath(r.Id))))}");
                return new Outcome(201, string.Join(" | ", files));
            case ProblemHttpResult problem:
                return new Outcome(problem.StatusCode, problem.ProblemDetails.Title ?? "");
            default:
                throw new InvalidOperationException($"Unexpected result {result}");
        }
    }

    private static (string, byte[]) Plain(string body) => ($"multipart/form-data; boundary={Boundary}", Encoding.UTF8.GetBytes(body));

    private static string Head(string fileName, string newline = "\r\n") =>
        $"Content-Disposition: form-data; name=\"file\"; filename=\"{fileName}\"{newline}Content-Type: text/plain";

    private static (string Head, byte[] Data) File(string fileName, string contentType, byte[] data) =>
        ($"Content-Disposition: form-data; name=\"file\"; filename=\"{fileName}\"\r\nContent-Type: {contentType}", data);

    private static (string Head, byte[] Data) Field(string name, string value) =>
        ($"Content-Disposition: form-data; name=\"{name}\"", Encoding.UTF8.GetBytes(value));

    private static byte[] Body(params (string Head, byte[] Data)[] parts) => Body(parts, closed: true);

    private static byte[] Body((string Head, byte[] Data)[] parts, bool closed)
    {
        var body = new MemoryStream();
        foreach (var (head, data) in parts)
        {
            body.Write(Encoding.UTF8.GetBytes($"--{Boundary}\r\n{head}\r\n\r\n"));
            body.Write(data);
            body.Write("\r\n"u8);
        }

        if (closed)
        {
            body.Write(Encoding.UTF8.GetBytes($"--{Boundary}--\r\n"));
        }

        return body.ToArray();
    }

    /// <summary>Random bytes strewn with the delimiter's prefixes, and the boundary with its CRLF or its dashes missing.</summary>
    private static byte[] TrickyContent(Random random)
    {
        var content = new MemoryStream();
        string[] near = ["\r\n--" + Boundary[..^1], "--" + Boundary, "\n--" + Boundary, "\r--" + Boundary, "\r\n-" + Boundary, "\r\n--", "\r\n", "\r", "-"];
        for (var i = 0; i < 200; i++)
        {
            content.Write(Bytes(random.Next(), random.Next(0, 200)));
            var piece = near[random.Next(near.Length)];
            content.Write(Encoding.ASCII.GetBytes(piece.Length > 6 && random.Next(3) == 0 ? piece[..random.Next(1, piece.Length)] : piece));
        }

        return content.ToArray();
    }

    private static byte[] Bytes(int seed, int length)
    {
        var bytes = new byte[length];
        new Random(seed).NextBytes(bytes);
        return bytes;
    }

    private static int[] Chunks(Random random, int length, int max)
    {
        var chunks = new List<int>();
        for (var left = length; left > 0;)
        {
            var chunk = Math.Min(left, random.Next(1, max + 1));
            chunks.Add(chunk);
            left -= chunk;
        }

        return [.. chunks];
    }

    /// <summary>A request body that hands out its bytes in the given chunks, one per read at most.</summary>
    private sealed class ChunkedStream(byte[] body, IReadOnlyList<int> chunks) : Stream
    {
        private int _position;
        private int _chunk;
        private int _leftInChunk = chunks.Count > 0 ? chunks[0] : 0;

        public override bool CanRead => true;

        public override bool CanSeek => false;

        public override bool CanWrite => false;

        public override long Length => throw new NotSupportedException();

        public override long Position { get => _position; set => throw new NotSupportedException(); }

        public override int Read(byte[] buffer, int offset, int count) => Read(buffer.AsSpan(offset, count));

        public override int Read(Span<byte> buffer)
        {
            while (_leftInChunk == 0 && ++_chunk < chunks.Count)
            {
                _leftInChunk = chunks[_chunk];
            }

            var take = Math.Min(Math.Min(buffer.Length, _leftInChunk), body.Length - _position);
            body.AsSpan(_position, take).CopyTo(buffer);
            _position += take;
            _leftInChunk -= take;
            return take;
        }

        public override ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default) => ValueTask.FromResult(Read(buffer.Span));

        public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) => Task.FromResult(Read(buffer.AsSpan(offset, count)));

        public override void Flush() => throw new NotSupportedException();

        public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

        public override void SetLength(long value) => throw new NotSupportedException();

        public override void Write(byte[] buffer, int offset, int count) => throw new NotSupportedException();
    }

    /// <summary>A <see cref="System.Buffers.ReadOnlySequence{T}"/> over several arrays, as a PipeReader hands out Kestrel's buffers.</summary>
    private sealed class Segments : System.Buffers.ReadOnlySequenceSegment<byte>
    {
        private Segments(byte[] data, long runningIndex)
        {
            Memory = data;
            RunningIndex = runningIndex;
        }

        public static System.Buffers.ReadOnlySequence<byte> Of(params byte[][] parts)
        {
            var first = new Segments(parts[0], 0);
            var last = first;
            foreach (var part in parts.Skip(1))
            {
                var next = new Segments(part, last.RunningIndex + last.Memory.Length);
                last.Next = next;
                last = next;
            }

            return new System.Buffers.ReadOnlySequence<byte>(first, 0, last, last.Memory.Length);
        }
    }
}
