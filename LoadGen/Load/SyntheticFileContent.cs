using System.Net;
using System.Net.Http.Json;
using System.Security.Cryptography;

namespace LoadGen.Load;

/// <summary>
/// A multipart/form-data body holding one file of <c>size</c> bytes, generated while it is sent (one
/// random 1 MiB block repeated), so LoadGen can upload 1 GiB without holding it in memory.
/// </summary>
public static class SyntheticFileContent
{
    private static readonly byte[] Block = RandomNumberGenerator.GetBytes(1 << 20);

    public static MultipartFormDataContent Create(long size, string fileName = "synthetic.bin") =>
        new() { { new StreamContent(new PatternStream(size), 128 * 1024), "file", fileName } };

    /// <summary>Uploads one file of <paramref name="size"/> bytes through <c>POST /api/uploads</c>; returns its id.</summary>
    public static async Task<string> StoreAsync(HttpClient client, long size, CancellationToken cancellationToken)
    {
        using var span = Exchange.StartSpan(HttpMethod.Post, "/api/uploads");
        using var response = await client.PostAsync("/api/uploads", Create(size), cancellationToken);
        response.EnsureSuccessStatusCode();
        return (await response.Content.ReadFromJsonAsync<List<Receipt>>(cancellationToken))![0].Id;
    }

    private sealed record Receipt(string Id);

    private sealed class PatternStream(long length) : Stream
    {
        private long _position;

        public override bool CanRead => true;

        public override bool CanSeek => false;

        public override bool CanWrite => false;

        public override long Length => length;

        public override long Position { get => _position; set => throw new NotSupportedException(); }

        public override int Read(byte[] buffer, int offset, int count) => Read(buffer.AsSpan(offset, count));

        public override int Read(Span<byte> buffer)
        {
            var total = 0;
            while (total < buffer.Length && _position < length)
            {
                var inBlock = (int)(_position % Block.Length);
                var take = (int)Math.Min(Math.Min(buffer.Length - total, Block.Length - inBlock), length - _position);
                Block.AsSpan(inBlock, take).CopyTo(buffer[total..]);
                total += take;
                _position += take;
            }

            return total;
        }

        public override ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default) =>
            ValueTask.FromResult(Read(buffer.Span));

        public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
            Task.FromResult(Read(buffer, offset, count));

        public override void Flush()
        {
        }

        public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

        public override void SetLength(long value) => throw new NotSupportedException();

        public override void Write(byte[] buffer, int offset, int count) => throw new NotSupportedException();
    }
}
