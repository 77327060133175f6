using HttpPerf.ServiceDefaults.Contract;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using StackExchange.Redis;

namespace HttpPerf.ServiceDefaults.FlagSources;

/// <summary>
/// The one Redis connection of a service (<c>ConnectionStrings:flags</c>, as Aspire's <c>AddRedis("flags")</c> and
/// <c>WithReference</c> give it): the flags, and the uploads quota shared by Uploads.Api replicas. Aspire's client
/// integration (Aspire.StackExchange.Redis) registers it as <see cref="IConnectionMultiplexer"/>, with its logging and
/// a span per Redis command; StackExchange.Redis multiplexes every call over it and reconnects by itself.
/// </summary>
public static class SharedRedis
{
    /// <summary>
    /// Redis refused, closed, or said nothing in time. The last is a <see cref="RedisTimeoutException"/>, a
    /// <see cref="TimeoutException"/> and not a <see cref="RedisException"/>: where Redis's node was lost (a swarm's, its
    /// address silent), it went past every <c>catch (RedisException)</c> and stopped the Gateway on every node (its flag
    /// audit, docs/deploy.md "On a swarm").
    /// </summary>
    public static bool Unreachable(Exception error) => error is RedisException or RedisTimeoutException;

    public static void AddSharedRedis(this IHostApplicationBuilder builder)
    {
        // The client's own log: a connection's failures and reconnects (Warning and above), not the 30 Information
        // lines of every connect's handshake.
        builder.Logging.AddFilter("StackExchange.Redis", LogLevel.Warning);
        builder.AddRedisClient(
            SystemContract.FlagsConnectionName,
            settings =>
            {
                // Aspire's check pings Redis and reports Unhealthy when it cannot: /health would answer 503 during an
                // outage, and the Gateway (and Compose) would take out every replica of every service, which still
                // serve with the last flags they loaded. FlagsHealthCheck says Degraded instead (a 200).
                settings.DisableHealthChecks = true;
            },
            options =>
            {
                // Connected lazily, when the flags source starts (RedisFlagsSource); a Redis out of reach then, or later,
                // leaves a disconnected multiplexer that keeps reconnecting, and the service starts and serves. Aspire
                // defaults to this too; set here so a connection string's abortConnect=true cannot undo it.
                options.AbortOnConnectFail = false;
                // Fail a call fast while Redis is away (the default waits 5 s); the flags already loaded stay in force.
                options.ConnectTimeout = 2_000;
                options.SyncTimeout = options.AsyncTimeout = 2_000;
                options.ReconnectRetryPolicy = new ExponentialRetry(deltaBackOffMilliseconds: 250, maxDeltaBackOffMilliseconds: 2_000);
            });
    }
}
