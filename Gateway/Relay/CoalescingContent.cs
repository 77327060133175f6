using System.Net;

namespace Gateway.Relay;

/// <summary>
/// An upstream response body read in as large pieces as have already arrived. YARP copies a body by issuing a
/// zero-byte read, then a read into its 64 KB buffer; on a chunked response that zero-byte read makes HttpClient
/// fill its own 4 KB connection buffer first, so every real read returns at most 4 KB, whatever size the upstream's
/// chunks are, and the Gateway wrote a 4 KB chunk (a flush and a send) to the client for each. Here one read keeps
/// taking what is already there (reads that complete at once) until the buffer is full or nothing more has
/// arrived; it never waits for more data while holding some, so a slow upstream still streams through as it comes.
/// </summary>
public sealed class CoalescingContent(HttpContent inner) : HttpContent
{
    protected override async Task<Stream> CreateContentReadStreamAsync(CancellationToken cancellationToken) =>
        new CoalescingStream(await inner.ReadAsStreamAsync(cancellationToken));

    protected override Task<Stream> CreateContentReadStreamAsync() => CreateContentReadStreamAsync(CancellationToken.None);

    protected override Task SerializeToStreamAsync(Stream stream, TransportContext? context) => inner.CopyToAsync(stream, context);

    protected override bool TryComputeLength(out long length)
    {
        length = 0;
        return false;
    }

    protected override void Dispose(bool disposing)
    {
        if (disposing)
        {
            inner.Dispose();
        }

        base.Dispose(disposing);
    }

    /// <summary>Copies <paramref name="inner"/>'s headers onto a coalescing wrapper of it.</summary>
    public static CoalescingContent Wrap(HttpContent inner)
    {
        var wrapper = new CoalescingContent(inner);
        foreach (var header in inner.Headers)
        {
            wrapper.Headers.TryAddWithoutValidation(header.Key, header.Value);
        }

        return wrapper;
    }

    private sealed class CoalescingStream(Stream inner) : Stream
    {

        public override bool CanRead => true;

        public override bool CanSeek => false;

        public override bool CanWrite => false;

        public override long Length => throw new NotSupportedException();

        public override long Position { get => throw new NotSupportedException(); set => throw new NotSupportedException(); }

        public override ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default) =>
            buffer.IsEmpty ? ValueTask.FromResult(0) : inner.ReadAsync(buffer, cancellationToken);

        public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
            ReadAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

        public override int Read(byte[] buffer, int offset, int count) => ReadAsync(buffer, offset, count).GetAwaiter().GetResult();

        public override void Flush()
        {
        }

        public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

        public override void SetLength(long value) => throw new NotSupportedException();

        public override void Write(byte[] buffer, int offset, int count) => throw new NotSupportedException();

        protected override void Dispose(bool disposing)
        {
            if (disposing)
            {
                inner.Dispose();
            }

            base.Dispose(disposing);
        }

        public override async ValueTask DisposeAsync()
        {
            await inner.DisposeAsync();
            await base.DisposeAsync();
        }
    }
}
