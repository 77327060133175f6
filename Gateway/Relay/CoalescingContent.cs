using System.Buffers;
using System.Net;
using HttpPerf.ServiceDefaults.Http;

namespace Gateway.Relay;

/// <summary>
/// An upstream response body relayed in as large pieces as have already arrived. YARP copies a body by issuing a
/// zero-byte read, then a read into its 64 KB buffer. On a chunked response, HttpClient answers a zero-byte read by
/// filling its own 4 KB connection buffer, and the next read then returns those 4 KB at most: the Gateway made one
/// system call per 4 KB read and wrote a 4 KB chunk to the client for each, whatever size the upstream's chunks were.
/// Here zero-byte reads are answered at once and never passed on, so HttpClient reads a large chunk's data straight
/// into a 64 KB buffer of this stream's; and each piece handed to YARP is everything that has arrived, as long as
/// reads keep completing at once, up to 64 KB. It never waits for more while holding some: the read that would
/// wait is left running into the free part of the buffer and taken at the next call, so a slow upstream still
/// streams through as it comes. The cost is one copy of the body, and 64 KB per relayed response while it lasts.
/// </summary>
public sealed class CoalescingContent(HttpContent inner) : WrappedContent(inner, keepsLength: true)
{
    private const int BufferSize = 64 * 1024;

    /// <summary>A coalescing wrapper of <paramref name="inner"/>, with its headers.</summary>
    public static CoalescingContent Wrap(HttpContent inner) => new(inner);

    protected override Stream Wrap(Stream body) => new CoalescingStream(body);

    // Copied whole, not in pieces: nothing here reads it piece by piece.
    protected override Task SerializeToStreamAsync(Stream stream, TransportContext? context) => Inner.CopyToAsync(stream, context);

    private sealed class CoalescingStream(Stream inner) : ReadOnlyStream
    {
        private readonly byte[] _buffer = ArrayPool<byte>.Shared.Rent(BufferSize);
        private int _start, _end; // the bytes read but not yet handed out
        private ValueTask<int>? _pending; // a read into _buffer[_end..] that had not completed when the last piece was handed out
        private bool _ended, _returned;

        public override async ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
        {
            if (buffer.IsEmpty)
            {
                return 0; // answered here: passed on, it would make HttpClient fill its 4 KB buffer first
            }

            if (_start == _end && !_ended)
            {
                // Nothing left: wait for the next piece, then take what has already arrived behind it.
                if (_pending is null)
                {
                    _start = _end = 0;
                }

                Take(await (_pending ?? inner.ReadAsync(_buffer.AsMemory(_end), cancellationToken)));
                while (!_ended && _end < _buffer.Length)
                {
                    var more = inner.ReadAsync(_buffer.AsMemory(_end), cancellationToken);
                    if (!more.IsCompleted)
                    {
                        _pending = more; // it goes on while this piece is relayed
                        break;
                    }

                    Take(await more);
                }
            }

            var count = Math.Min(buffer.Length, _end - _start);
            _buffer.AsSpan(_start, count).CopyTo(buffer.Span);
            _start += count;
            return count;
        }

        private void Take(int read)
        {
            _pending = null;
            _ended = read == 0;
            _end += read;
        }

        protected override void Dispose(bool disposing)
        {
            if (disposing)
            {
                inner.Dispose();
                ReturnBuffer();
            }

            base.Dispose(disposing);
        }

        public override async ValueTask DisposeAsync()
        {
            await inner.DisposeAsync();
            ReturnBuffer();
            await base.DisposeAsync();
        }

        private void ReturnBuffer()
        {
            // Not while a read may still write into it: disposing the inner stream ends that read, but not at once.
            if (!_returned && (_pending is null || _pending.Value.IsCompleted))
            {
                _returned = true;
                ArrayPool<byte>.Shared.Return(_buffer);
            }
        }
    }
}
