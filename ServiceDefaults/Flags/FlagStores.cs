using StackExchange.Redis;

namespace HttpPerf.ServiceDefaults.Flags;

/// <summary>
/// Where the system's flags are kept, for the Gateway's admin API and landing page: the shared flags file, or
/// Redis when <c>ConnectionStrings:flags</c> is set. The services read the same place through configuration
/// (<see cref="FlagsFileSource"/>, <see cref="RedisFlagsSource"/>).
/// </summary>
public interface IFlagStore
{
    /// <summary>The variant of every known flag; <see cref="FlagStoreUnavailableException"/> when the store cannot say.</summary>
    Task<IReadOnlyDictionary<string, string>> ReadAsync(CancellationToken cancellationToken = default);

    /// <summary>Sets some flags, keeping the others; <see cref="FlagStoreUnavailableException"/> when nothing could be written.</summary>
    Task SetAsync(IReadOnlyDictionary<string, string> changes, CancellationToken cancellationToken = default);
}

/// <summary>The flags cannot be read or written now: a flags file that does not parse, or Redis out of reach.</summary>
public sealed class FlagStoreUnavailableException(string message, Exception? inner = null) : Exception(message, inner);

/// <summary>The shared flags file (<c>FeatureFlags:File</c>): the default, which needs nothing but a disk.</summary>
public sealed class FileFlagStore(string path) : IFlagStore
{
    public string Path { get; } = path;

    public Task<IReadOnlyDictionary<string, string>> ReadAsync(CancellationToken cancellationToken = default) =>
        FlagsFile.ReadAsync(Path, cancellationToken);

    public Task SetAsync(IReadOnlyDictionary<string, string> changes, CancellationToken cancellationToken = default) =>
        FlagsFile.SetAsync(Path, changes, cancellationToken);
}

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
        catch (RedisException error)
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
        catch (RedisException error)
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

    private static FlagStoreUnavailableException Unavailable(RedisException error) =>
        new($"Redis cannot be reached, so the flags cannot be read or changed now: {error.Message}", error);
}
