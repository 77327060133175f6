namespace Uploads.Api.Storage;

/// <summary>The quota of one process: with several replicas, each may fill it (docs/deploy.md).</summary>
public sealed class InProcessQuotaLedger : IQuotaLedger
{
    private long _used;

    public long LeaseBytes => 0;

    public Task StartAsync(long storedBytes, string instance, IReadOnlyList<string> goneInstances)
    {
        Interlocked.Exchange(ref _used, storedBytes);
        return Task.CompletedTask;
    }

    public ValueTask<long> TryReserveAsync(long needed, long wanted, long maxStoredBytes)
    {
        if (Interlocked.Add(ref _used, needed) <= maxStoredBytes)
        {
            return ValueTask.FromResult(needed);
        }

        Interlocked.Add(ref _used, -needed);
        return ValueTask.FromResult(0L);
    }

    public Task CommitAsync(long written, long reserved)
    {
        Interlocked.Add(ref _used, written - reserved);
        return Task.CompletedTask;
    }

    public Task ReleaseAsync(long reserved)
    {
        Interlocked.Add(ref _used, -reserved);
        return Task.CompletedTask;
    }

    public Task RemoveStoredAsync(long bytes) => ReleaseAsync(bytes);
}
