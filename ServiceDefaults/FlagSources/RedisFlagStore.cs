using HttpPerf.ServiceDefaults.Contract;
using StackExchange.Redis;

namespace HttpPerf.ServiceDefaults.FlagSources;

/// <summary>
/// Flags in Redis, shared by every replica of every service: one hash field per flag (<c>HSET</c> is atomic, so
/// two admins changing two flags never lose one), then a message on a channel that every service subscribes to,
/// so each applies the change within milliseconds.
/// </summary>
public sealed class RedisFlagStore(IConnectionMultiplexer redis) : IFlagStore
{
    public const string Key = "httpperf:flags";
    public static readonly RedisChannel Changed = RedisChannel.Literal("httpperf:flags:changed");

    public async Task<IReadOnlyDictionary<string, string>> ReadAsync(CancellationToken cancellationToken = default)
    {
        try
        {
            return Variants(await redis.GetDatabase().HashGetAllAsync(Key));
        }
        catch (Exception error) when (SharedRedis.Unreachable(error))
        {
            throw Unavailable(error);
        }
    }

    public async Task SetAsync(IReadOnlyDictionary<string, string> changes, CancellationToken cancellationToken = default)
    {
        try
        {
            await redis.GetDatabase().HashSetAsync(Key, changes.Select(c => new HashEntry(c.Key, c.Value)).ToArray());
            await redis.GetSubscriber().PublishAsync(Changed, "set");
        }
        catch (Exception error) when (SharedRedis.Unreachable(error))
        {
            throw Unavailable(error);
        }
    }

    /// <summary>Every known flag: as Redis says, <c>optimized</c> where it says nothing or something unknown.</summary>
    internal static Dictionary<string, string> Variants(HashEntry[] entries)
    {
        var variants = FlagsFile.Defaults();
        foreach (var entry in entries)
        {
            if (variants.ContainsKey(entry.Name!))
            {
                variants[entry.Name!] = PerfMode.OrOptimized(entry.Name!, entry.Value);
            }
        }

        return variants;
    }

    private static FlagStoreUnavailableException Unavailable(Exception error) =>
        new($"Redis cannot be reached, so the flags cannot be read or changed now: {error.Message}", error);
}
