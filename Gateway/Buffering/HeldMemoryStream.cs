using HttpPerf.ServiceDefaults.Http;

namespace Gateway.Buffering;

/// <summary>
/// A <see cref="MemoryStream"/> that asks the request's <see cref="HeldMemory"/> before its buffer grows, and grows it as
/// MemoryStream does (to twice its capacity, or what the write needs). While it grows it holds both buffers, the old one
/// copied into the new (32 and 64 MiB at once, on the way to a 40 MiB body), and then the new one only. Past the replica's budget the write throws an
/// <see cref="InsufficientMemoryException"/>, before the buffer is allocated: the response it captures has not begun,
/// so the client gets a 503 (docs/memory.md).
/// </summary>
internal sealed class HeldMemoryStream(HeldMemory memory, string what) : MemoryStream
{
    public override void Write(byte[] buffer, int offset, int count)
    {
        Reserve(count);
        base.Write(buffer, offset, count);
    }

    public override void Write(ReadOnlySpan<byte> buffer)
    {
        Reserve(buffer.Length);
        base.Write(buffer);
    }

    public override Task WriteAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken)
    {
        Reserve(count);
        return base.WriteAsync(buffer, offset, count, cancellationToken);
    }

    public override ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default)
    {
        Reserve(buffer.Length);
        return base.WriteAsync(buffer, cancellationToken);
    }

    public override void WriteByte(byte value)
    {
        Reserve(1);
        base.WriteByte(value);
    }

    private void Reserve(int count)
    {
        var needed = Position + count;
        if (needed > Capacity)
        {
            var capacity = Math.Min(Array.MaxLength, Math.Max(needed, Math.Max(256L, 2L * Capacity)));
            memory.GrowTo(Capacity + capacity, what);
            Capacity = (int)capacity;
            memory.ShrinkTo(capacity);
        }
    }
}
