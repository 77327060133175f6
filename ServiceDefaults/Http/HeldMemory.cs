namespace HttpPerf.ServiceDefaults.Http;

/// <summary>
/// What this request holds of its replica's <see cref="MemoryBudget"/>: nothing until a rung that buffers a body
/// whole asks for it, all at once or as the body grows. A request's service (scoped), so the request's end gives it
/// back, after its response is sent, however it ended.
/// </summary>
public sealed class HeldMemory(MemoryBudget budget) : IDisposable
{
    private long _bytes;

    /// <summary>Bytes this request holds.</summary>
    public long Bytes => Interlocked.Read(ref _bytes);

    /// <summary>
    /// Holds <paramref name="bytes"/> more for <paramref name="what"/>, or throws <see cref="InsufficientMemoryException"/>
    /// (answered 503 with Retry-After) holding no more than before.
    /// </summary>
    public void Grow(long bytes, string what)
    {
        if (bytes <= 0)
        {
            return;
        }

        if (!budget.TryTake(bytes))
        {
            throw new InsufficientMemoryException(
                $"Refused: {what} would hold {Mib(Bytes + bytes)} MiB, beside the {Mib(budget.Held)} MiB this replica's requests hold of the {Mib(budget.Bytes)} MiB they may.");
        }

        Interlocked.Add(ref _bytes, bytes);
    }

    /// <summary>Holds <paramref name="total"/> bytes in all for <paramref name="what"/> (a buffer grown to that capacity).</summary>
    public void GrowTo(long total, string what) => Grow(total - Bytes, what);

    /// <summary>Gives back what this request holds above <paramref name="total"/> bytes (a buffer's old copy, released).</summary>
    public void ShrinkTo(long total)
    {
        var above = Bytes - Math.Max(0, total);
        if (above > 0)
        {
            Interlocked.Add(ref _bytes, -above);
            budget.Give(above);
        }
    }

    public void Dispose() => budget.Give(Interlocked.Exchange(ref _bytes, 0));

    private static long Mib(long bytes) => (bytes + (1 << 20) - 1) >> 20;
}
