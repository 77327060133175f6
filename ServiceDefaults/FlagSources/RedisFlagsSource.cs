using System.Text;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.Configuration.Json;
using Microsoft.Extensions.Hosting;
using StackExchange.Redis;

namespace HttpPerf.ServiceDefaults.FlagSources;

/// <summary>
/// The flags in Redis as a configuration source that Microsoft.FeatureManagement reads, exactly as it reads the
/// flags file: the same document (<see cref="FlagsFile.ToJson"/>), built from the Redis hash. It reloads when a
/// change is published and when the connection comes back (changes made while it was away). While Redis is out
/// of reach it keeps the flags it last loaded: a service never falls back to the defaults on its own. A Redis that
/// comes back empty (restarted without persistence) gets those flags written back, by the first replica to see it
/// empty, so the admin page and every replica go on agreeing with what is served.
/// The connection is Aspire's (<see cref="SharedRedis"/>), a DI singleton that exists only once the host is built,
/// after configuration: so the source is empty until <see cref="RedisFlagsStartup"/> hands it the connection as
/// the host starts, before Kestrel listens, and the first request already sees the flags in Redis.
/// </summary>
internal sealed class RedisFlagsSource : IConfigurationSource
{
    private readonly Provider _provider = new();

    public IConfigurationProvider Build(IConfigurationBuilder builder) => _provider;

    /// <summary>Loads what Redis has now (nothing while it is out of reach: every flag optimized, and Degraded health), then follows it.</summary>
    public Task ConnectAsync(IConnectionMultiplexer redis) => _provider.ConnectAsync(redis);

    private sealed class Provider() : JsonStreamConfigurationProvider(new JsonStreamConfigurationSource())
    {
        private IConnectionMultiplexer? _redis;
        private Dictionary<string, string>? _loaded;
        private readonly SemaphoreSlim _reloading = new(1, 1);

        /// <summary>Nothing to read before the host starts; what was loaded stays when configuration is rebuilt.</summary>
        public override void Load()
        {
        }

        public async Task ConnectAsync(IConnectionMultiplexer redis)
        {
            _redis = redis;
            // Fire and forget: the handler is registered at once, and StackExchange.Redis sends SUBSCRIBE again on every
            // (re)connect. Awaited, it throws after 2 s while Redis is away, and the host does not start
            // (ReplicaTests.A_system_started_while_Redis_is_away_...).
            await redis.GetSubscriber().SubscribeAsync(RedisFlagStore.Changed, (_, _) => _ = ReloadAsync(), CommandFlags.FireAndForget);
            redis.ConnectionRestored += (_, _) => _ = ReloadAsync();
            await ReloadAsync();
        }

        private async Task ReloadAsync()
        {
            // One reload at a time: two changes published close together start two reads, and without this the
            // older read could be applied after the newer one, leaving a replica on a flag already changed back.
            await _reloading.WaitAsync();
            var database = _redis!.GetDatabase();
            try
            {
                var entries = await database.HashGetAllAsync(RedisFlagStore.Key);
                if (entries.Length == 0 && _loaded is { } loaded)
                {
                    // Written back whole, in one transaction, and only if no replica did it first: written a field at a
                    // time, another replica reading in between took the fields not yet written as optimized.
                    var restore = database.CreateTransaction();
                    restore.AddCondition(Condition.KeyNotExists(RedisFlagStore.Key));
                    _ = restore.HashSetAsync(RedisFlagStore.Key, [.. loaded.Select(flag => new HashEntry(flag.Key, flag.Value))]);
                    await restore.ExecuteAsync();
                    entries = await database.HashGetAllAsync(RedisFlagStore.Key);
                }

                Apply(entries);
                OnReload();
            }
            catch (Exception error) when (SharedRedis.Unreachable(error))
            {
                // Out of reach (at start, or gone again): the last flags loaded stay in force; the next reconnect reloads.
            }
            finally
            {
                _reloading.Release();
            }
        }

        private void Apply(HashEntry[] entries)
        {
            var variants = RedisFlagStore.Variants(entries);
            _loaded = entries.Length > 0 ? variants : null;
            using var json = new MemoryStream(Encoding.UTF8.GetBytes(FlagsFile.ToJson(variants)));
            Load(json); // the JSON provider's parser: the same keys as the flags file
        }
    }
}
