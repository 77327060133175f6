using System.Text;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.Configuration.Json;
using StackExchange.Redis;

namespace HttpPerf.ServiceDefaults.Flags;

/// <summary>
/// The flags in Redis as a configuration source that Microsoft.FeatureManagement reads, exactly as it reads the
/// flags file: the same document (<see cref="FlagsFile.ToJson"/>), built from the Redis hash. It reloads when a
/// change is published and when the connection comes back (changes made while it was away). While Redis is out
/// of reach it keeps the flags it last loaded: a service never falls back to the defaults on its own. A Redis that
/// comes back empty (restarted without persistence) gets those flags written back, each only if still unset, so
/// the admin page and every replica go on agreeing with what is served.
/// </summary>
internal sealed class RedisFlagsSource(SharedRedis redis) : IConfigurationSource
{
    public IConfigurationProvider Build(IConfigurationBuilder builder) => new Provider(redis);

    private sealed class Provider : JsonStreamConfigurationProvider
    {
        private readonly SharedRedis _redis;
        private Dictionary<string, string>? _loaded;

        public Provider(SharedRedis redis) : base(new JsonStreamConfigurationSource())
        {
            _redis = redis;
            redis.Connection.GetSubscriber().Subscribe(RedisFlagStore.Changed, (_, _) => _ = ReloadAsync());
            redis.Connection.ConnectionRestored += (_, _) => _ = ReloadAsync();
        }

        /// <summary>At start: whatever Redis has now (every flag optimized while it is out of reach, and Degraded health).</summary>
        public override void Load()
        {
            try
            {
                Apply(_redis.Database.HashGetAll(RedisFlagStore.Key));
            }
            catch (RedisException)
            {
                // Out of reach at start: nothing loaded yet; the health check says Degraded until it reconnects.
            }
        }

        private async Task ReloadAsync()
        {
            try
            {
                var entries = await _redis.Database.HashGetAllAsync(RedisFlagStore.Key);
                if (entries.Length == 0 && _loaded is { } loaded)
                {
                    foreach (var (flag, variant) in loaded)
                    {
                        await _redis.Database.HashSetAsync(RedisFlagStore.Key, flag, variant, When.NotExists);
                    }

                    return;
                }

                Apply(entries);
                OnReload();
            }
            catch (RedisException)
            {
                // Gone again: the last flags loaded stay in force; the next reconnect reloads.
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
