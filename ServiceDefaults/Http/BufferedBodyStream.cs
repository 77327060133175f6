using System.Buffers;

namespace HttpPerf.ServiceDefaults.Http;

/// <summary>
/// A response body read into a pooled buffer of its own (64 KB, larger only while a derived stream holds more back)
/// and handed on from there: the one copy of its bytes between the body's stream and its reader. Zero-byte reads are
/// answered at once, never passed on: on a chunked response HttpClient would answer one by filling its own 4 KB
/// connection buffer, and its next read would return 4 KB at most; each read here goes into the buffer's free part,
/// where HttpClient reads a large chunk straight in.
/// When it <c>coalesces</c>, each fill takes every read that completes at once, up to the buffer's end, so the reader
/// is handed everything that has arrived. It never waits for more while holding some: the read that would wait is left
/// running into the free part and taken at the next fill, so a slow body still streams through as it comes.
/// A derived stream may hold bytes back (<see cref="Ready"/>, set in <see cref="Took"/>) and handle a read's end or
/// failure (<see cref="TakeAsync"/>). The Gateway's coalescing relay (Gateway/Relay/CoalescingContent.cs) and the
/// resumed Catalog read (Hedging/ResumingCatalogContent.cs) are made of it; the Gateway reads a relayed catalog
/// through one of them, not one inside the other (docs/pitfalls/Gateway.Buffering.md).
/// </summary>
public class BufferedBodyStream(Stream body, bool coalesces) : ReadOnlyStream
{
    private const int InitialSize = 64 * 1024;

    private ValueTask<int>? _pending; // a read into the free part that had not completed when the last piece was handed on
    private bool _returned;

    /// <summary>The body read, which a derived stream may swap for another (a resumed read).</summary>
    protected Stream Body { get; set; } = body;

    protected byte[] Buffer { get; private set; } = ArrayPool<byte>.Shared.Rent(InitialSize);

    /// <summary>The next byte to hand on.</summary>
    protected int Start { get; set; }

    /// <summary>The end of what may be handed on.</summary>
    protected int Ready { get; set; }

    /// <summary>The end of the bytes read.</summary>
    protected int End { get; set; }

    /// <summary>Nothing more will be read: once what is ready has been handed on, the reader gets its end.</summary>
    protected bool Ended { get; set; }

    public override async ValueTask<int> ReadAsync(Memory<byte> destination, CancellationToken cancellationToken = default)
    {
        if (destination.IsEmpty)
        {
            return 0; // answered here: passed on, it would make HttpClient fill its 4 KB buffer first
        }

        while (Start == Ready)
        {
            if (Ended)
            {
                return 0;
            }

            await FillAsync(cancellationToken);
        }

        var count = Math.Min(destination.Length, Ready - Start);
        Buffer.AsSpan(Start, count).CopyTo(destination.Span);
        Start += count;
        return count;
    }

    /// <summary>One read of the body into <paramref name="free"/>: the bytes read, 0 at its end.</summary>
    protected virtual ValueTask<int> ReadBodyAsync(Memory<byte> free, CancellationToken cancellationToken) => Body.ReadAsync(free, cancellationToken);

    /// <summary>Takes the first read of a fill, which may have waited, ended the body or failed.</summary>
    protected virtual async ValueTask TakeAsync(ValueTask<int> read, CancellationToken cancellationToken) => Took(await read);

    /// <summary>Takes <paramref name="read"/> bytes read at <see cref="End"/> (0: the body's end); by default all are ready.</summary>
    protected virtual void Took(int read)
    {
        End += read;
        Ready = End;
        Ended = read == 0;
    }

    /// <summary>Waits for one read, the one left running or a new one; then, coalescing, takes what has already arrived behind it.</summary>
    private async ValueTask FillAsync(CancellationToken cancellationToken)
    {
        if (_pending is not { } read)
        {
            MakeRoom();
            read = ReadBodyAsync(Buffer.AsMemory(End), cancellationToken);
        }

        _pending = null;
        await TakeAsync(read, cancellationToken);
        while (coalesces && !Ended && End < Buffer.Length)
        {
            var more = ReadBodyAsync(Buffer.AsMemory(End), cancellationToken);
            if (!more.IsCompletedSuccessfully)
            {
                _pending = more; // it goes on while this piece is handed on; a failure is taken at the next fill
                return;
            }

            if (more.Result is var count and > 0)
            {
                Took(count);
            }
            else
            {
                _pending = new ValueTask<int>(0); // the end, taken at the next fill, as the first read of one is
                return;
            }
        }
    }

    /// <summary>Moves the bytes not handed on yet to the buffer's start, and doubles it if it is full of them.</summary>
    private void MakeRoom()
    {
        if (Start > 0)
        {
            Buffer.AsSpan(Start, End - Start).CopyTo(Buffer);
            (Ready, End) = (Ready - Start, End - Start);
            Start = 0;
        }

        if (End == Buffer.Length)
        {
            var larger = ArrayPool<byte>.Shared.Rent(Buffer.Length * 2);
            Buffer.AsSpan(0, End).CopyTo(larger);
            ArrayPool<byte>.Shared.Return(Buffer);
            Buffer = larger;
        }
    }

    protected override void Dispose(bool disposing)
    {
        if (disposing)
        {
            Body.Dispose();
            // Not while a read may still write into it: disposing the body ends that read, but not at once.
            if (!_returned && (_pending is null || _pending.Value.IsCompleted))
            {
                _returned = true;
                ArrayPool<byte>.Shared.Return(Buffer);
            }
        }

        base.Dispose(disposing);
    }
}
