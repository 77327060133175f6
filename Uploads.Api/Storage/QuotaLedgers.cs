using HttpPerf.ServiceDefaults;
using StackExchange.Redis;

namespace Uploads.Api.Storage;

/// <summary>Where the quota's count lives: stored bytes, and the bytes that uploads in progress have reserved.</summary>
public interface IQuotaLedger
{
    /// <summary>How much one reservation takes at once: 0 reserves exactly each chunk.</summary>
    long LeaseBytes { get; }

    /// <summary>At start: the bytes stored on disk now; forget what this instance and the gone ones had reserved.</summary>
    Task StartAsync(long storedBytes, string instance, IReadOnlyList<string> goneInstances);

    /// <summary>Reserves <paramref name="bytes"/> if stored + reserved stays within <paramref name="maxStoredBytes"/>.</summary>
    ValueTask<bool> TryReserveAsync(long bytes, long maxStoredBytes);

    /// <summary>An upload committed: <paramref name="written"/> bytes are stored now, its <paramref name="reserved"/> bytes are no longer reserved.</summary>
    Task CommitAsync(long written, long reserved);

    Task ReleaseAsync(long reserved);
}

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

    public ValueTask<bool> TryReserveAsync(long bytes, long maxStoredBytes)
    {
        if (Interlocked.Add(ref _used, bytes) <= maxStoredBytes)
        {
            return ValueTask.FromResult(true);
        }

        Interlocked.Add(ref _used, -bytes);
        return ValueTask.FromResult(false);
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
}

/// <summary>
/// The quota shared by every replica, in Redis: the stored bytes in one key, and each replica's reservations in a
/// hash field of its own, so a replica that dies leaks nothing for long (its field goes when it, or a replica that
/// finds it gone, starts). A reservation is one Lua script: the check and the increment are atomic across replicas.
/// The stored bytes are recounted from disk at each start; a commit racing that recount may be missed until the
/// next one. While Redis is out of reach an upload is refused with a 503: the quota cannot be checked.
/// </summary>
public sealed partial class RedisQuotaLedger(SharedRedis redis, ILogger<RedisQuotaLedger> logger) : IQuotaLedger
{
    private static readonly RedisKey Stored = "httpperf:uploads:stored";
    private static readonly RedisKey Reserved = "httpperf:uploads:reserved";

    private const string ReserveScript = """
        local used = tonumber(redis.call('GET', KEYS[1]) or '0')
        for _, bytes in ipairs(redis.call('HVALS', KEYS[2])) do used = used + tonumber(bytes) end
        if used + tonumber(ARGV[2]) > tonumber(ARGV[3]) then return 0 end
        redis.call('HINCRBY', KEYS[2], ARGV[1], ARGV[2])
        return 1
        """;

    private const string CommitScript = """
        redis.call('HINCRBY', KEYS[2], ARGV[1], -tonumber(ARGV[3]))
        redis.call('INCRBY', KEYS[1], ARGV[2])
        return 1
        """;

    private string _instance = "";

    public long LeaseBytes => 8 << 20;

    public async Task StartAsync(long storedBytes, string instance, IReadOnlyList<string> goneInstances)
    {
        _instance = instance;
        var batch = redis.Database.CreateBatch();
        var forget = batch.HashDeleteAsync(Reserved, [instance, .. goneInstances.Select(g => (RedisValue)g)]);
        var recount = batch.StringSetAsync(Stored, storedBytes);
        batch.Execute();
        try
        {
            await Task.WhenAll(forget, recount);
        }
        catch (RedisException error)
        {
            LogUnreachable(logger, "recount the stored bytes at start", error.Message);
        }
    }

    public async ValueTask<bool> TryReserveAsync(long bytes, long maxStoredBytes)
    {
        try
        {
            return (int)await redis.Database.ScriptEvaluateAsync(ReserveScript, [Stored, Reserved], [_instance, bytes, maxStoredBytes]) == 1;
        }
        catch (RedisException error)
        {
            throw new UploadRejectedException(StatusCodes.Status503ServiceUnavailable, $"The storage quota cannot be checked now (Redis is out of reach): {error.Message}");
        }
    }

    public Task CommitAsync(long written, long reserved) =>
        RunAsync("count a committed upload", redis.Database.ScriptEvaluateAsync(CommitScript, [Stored, Reserved], [_instance, written, reserved]));

    public Task ReleaseAsync(long reserved) =>
        RunAsync("release a reservation", redis.Database.HashIncrementAsync(Reserved, _instance, -reserved));

    /// <summary>A count that could not be updated is logged, not thrown: the upload itself is already stored or gone.</summary>
    private async Task RunAsync(string what, Task call)
    {
        try
        {
            await call;
        }
        catch (RedisException error)
        {
            LogUnreachable(logger, what, error.Message);
        }
    }

    [LoggerMessage(Level = LogLevel.Warning, Message = "Could not {What} in the shared storage quota: {Error}")]
    private static partial void LogUnreachable(ILogger logger, string what, string error);
}
