using System.IO.Pipelines;
using Microsoft.AspNetCore.Http.Features;

namespace HttpPerf.ServiceDefaults.Telemetry;

/// <summary>
/// Wraps the server's response body to count what a handler hands it: body bytes, and flushes that carried
/// bytes (each one becomes at least one HTTP chunk and one send). Both the <see cref="PipeWriter"/> and the
/// <see cref="Stream"/> views are passed through untouched, so a handler behaves exactly as without it:
/// a write to Kestrel's response stream is a write plus a flush, a <c>PipeWriter</c> write is buffered
/// until its flush, and unflushed-bytes reporting (which System.Text.Json uses to decide when to flush) is
/// the server's own.
/// </summary>
internal sealed class CountingResponseBody(IHttpResponseBodyFeature inner) : IHttpResponseBodyFeature
{
    private CountingPipeWriter? _writer;
    private CountingStream? _stream;
    private long _streamBytes;
    private long _streamFlushes;
    private long _fileBytes;

    public long Bytes => _streamBytes + _fileBytes + (_writer?.Bytes ?? 0);

    public long Flushes => _streamFlushes + (_fileBytes > 0 ? 1 : 0) + (_writer?.Flushes ?? 0);

    public Stream Stream => _stream ??= new CountingStream(inner.Stream, this);

    public PipeWriter Writer => _writer ??= new CountingPipeWriter(inner.Writer);

    public void DisableBuffering() => inner.DisableBuffering();

    public Task StartAsync(CancellationToken cancellationToken = default) => inner.StartAsync(cancellationToken);

    public Task CompleteAsync() => inner.CompleteAsync();

    public Task SendFileAsync(string path, long offset, long? count, CancellationToken cancellationToken = default)
    {
        _fileBytes += count ?? new FileInfo(path).Length - offset;
        return inner.SendFileAsync(path, offset, count, cancellationToken);
    }

    private sealed class CountingPipeWriter(PipeWriter inner) : PipeWriter
    {
        private long _unflushed;

        public long Bytes { get; private set; }

        public long Flushes { get; private set; }

        public override bool CanGetUnflushedBytes => inner.CanGetUnflushedBytes;

        public override long UnflushedBytes => inner.UnflushedBytes;

        public override void Advance(int bytes)
        {
            Bytes += bytes;
            _unflushed += bytes;
            inner.Advance(bytes);
        }

        public override Memory<byte> GetMemory(int sizeHint = 0) => inner.GetMemory(sizeHint);

        public override Span<byte> GetSpan(int sizeHint = 0) => inner.GetSpan(sizeHint);

        public override ValueTask<FlushResult> FlushAsync(CancellationToken cancellationToken = default)
        {
            if (_unflushed > 0)
            {
                Flushes++;
                _unflushed = 0;
            }

            return inner.FlushAsync(cancellationToken);
        }

        public override ValueTask<FlushResult> WriteAsync(ReadOnlyMemory<byte> source, CancellationToken cancellationToken = default)
        {
            Bytes += source.Length;
            if (source.Length + _unflushed > 0)
            {
                Flushes++;
                _unflushed = 0;
            }

            return inner.WriteAsync(source, cancellationToken);
        }

        public override void CancelPendingFlush() => inner.CancelPendingFlush();

        public override void Complete(Exception? exception = null) => inner.Complete(exception);

        public override ValueTask CompleteAsync(Exception? exception = null) => inner.CompleteAsync(exception);
    }

    /// <summary>Kestrel's response stream flushes on every write, so each non-empty write counts as a flush.</summary>
    private sealed class CountingStream(Stream inner, CountingResponseBody owner) : Stream
    {
        public override bool CanRead => false;

        public override bool CanSeek => false;

        public override bool CanWrite => inner.CanWrite;

        public override long Length => throw new NotSupportedException();

        public override long Position { get => throw new NotSupportedException(); set => throw new NotSupportedException(); }

        public override void Write(byte[] buffer, int offset, int count) => Write(buffer.AsSpan(offset, count));

        public override void Write(ReadOnlySpan<byte> buffer)
        {
            Count(buffer.Length);
            inner.Write(buffer);
        }

        public override Task WriteAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
            WriteAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

        public override ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default)
        {
            Count(buffer.Length);
            return inner.WriteAsync(buffer, cancellationToken);
        }

        public override void Flush() => inner.Flush();

        public override Task FlushAsync(CancellationToken cancellationToken) => inner.FlushAsync(cancellationToken);

        public override int Read(byte[] buffer, int offset, int count) => throw new NotSupportedException();

        public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

        public override void SetLength(long value) => throw new NotSupportedException();

        private void Count(int bytes)
        {
            if (bytes > 0)
            {
                owner._streamBytes += bytes;
                owner._streamFlushes++;
            }
        }
    }
}
