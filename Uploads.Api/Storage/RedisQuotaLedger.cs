using HttpPerf.ServiceDefaults.FlagSources;
using StackExchange.Redis;

namespace Uploads.Api.Storage;

/// <summary>
/// The quota shared by every replica, in Redis: the stored bytes in one key, and each replica's reservations in a
/// hash field of its own, so a replica that dies leaks nothing for long (its field goes when it, or a replica that
/// finds it gone, starts). A reservation is one Lua script: the check and the increment are atomic across replicas.
/// It asks for a lease of 8 MiB (one call per 8 MiB, not per 128 KB chunk) and takes what is left when less is, so
/// a lease never refuses an upload that fits.
/// The stored bytes are recounted from disk at each start; a commit racing that recount may be missed until the
/// next one. While Redis is out of reach an upload is refused with a 503: the quota cannot be checked.
/// </summary>
public sealed partial class RedisQuotaLedger(IConnectionMultiplexer redis, ILogger<RedisQuotaLedger> logger) : IQuotaLedger
{
    private static readonly RedisKey Stored = "httpperf:uploads:stored";
    private static readonly RedisKey Reserved = "httpperf:uploads:reserved";

    // KEYS: stored, reserved; ARGV: instance, needed, wanted, quota. Grants what is left, up to wanted, or 0.
    private const string ReserveScript = """
        local used = tonumber(redis.call('GET', KEYS[1]) or '0')
        for _, bytes in ipairs(redis.call('HVALS', KEYS[2])) do used = used + tonumber(bytes) end
        local grant = math.min(tonumber(ARGV[3]), tonumber(ARGV[4]) - used)
        if grant < tonumber(ARGV[2]) then return 0 end
        redis.call('HINCRBY', KEYS[2], ARGV[1], grant)
        return grant
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
        var batch = redis.GetDatabase().CreateBatch();
        var forget = batch.HashDeleteAsync(Reserved, [instance, .. goneInstances.Select(g => (RedisValue)g)]);
        var recount = batch.StringSetAsync(Stored, storedBytes);
        batch.Execute();
        try
        {
            await Task.WhenAll(forget, recount);
        }
        catch (Exception error) when (SharedRedis.Unreachable(error))
        {
            LogUnreachable(logger, "recount the stored bytes at start", error.Message);
        }
    }

    public async ValueTask<long> TryReserveAsync(long needed, long wanted, long maxStoredBytes)
    {
        try
        {
            return (long)await redis.GetDatabase().ScriptEvaluateAsync(ReserveScript, [Stored, Reserved], [_instance, needed, wanted, maxStoredBytes]);
        }
        catch (Exception error) when (SharedRedis.Unreachable(error))
        {
            throw new UploadRejectedException(StatusCodes.Status503ServiceUnavailable, $"The storage quota cannot be checked now (Redis is out of reach): {error.Message}");
        }
    }

    public Task CommitAsync(long written, long reserved) =>
        RunAsync("count a committed upload", redis.GetDatabase().ScriptEvaluateAsync(CommitScript, [Stored, Reserved], [_instance, written, reserved]));

    public Task ReleaseAsync(long reserved) =>
        RunAsync("release a reservation", redis.GetDatabase().HashIncrementAsync(Reserved, _instance, -reserved));

    public Task RemoveStoredAsync(long bytes) =>
        RunAsync("count a deleted upload", redis.GetDatabase().StringDecrementAsync(Stored, bytes));

    /// <summary>A count that could not be updated is logged, not thrown: the upload itself is already stored or gone.</summary>
    private async Task RunAsync(string what, Task call)
    {
        try
        {
            await call;
        }
        catch (Exception error) when (SharedRedis.Unreachable(error))
        {
            LogUnreachable(logger, what, error.Message);
        }
    }

    [LoggerMessage(Level = LogLevel.Warning, Message = "Could not {What} in the shared storage quota: {Error}")]
    private static partial void LogUnreachable(ILogger logger, string what, string error);
}
