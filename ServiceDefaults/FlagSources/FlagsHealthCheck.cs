using Microsoft.Extensions.Diagnostics.HealthChecks;
using StackExchange.Redis;

namespace HttpPerf.ServiceDefaults.FlagSources;

/// <summary>
/// Degraded, not Unhealthy, when the flags cannot be refreshed (Redis out of reach, or a flags file that does
/// not parse): the service still serves, with the last flags it had, so a balancer keeps it in rotation
/// (<c>/health</c> answers 200 for Degraded) while the dashboard and the logs say what is wrong. It stands in for
/// Aspire's Redis health check, which would say Unhealthy (<see cref="SharedRedis"/>).
/// </summary>
internal sealed class FlagsHealthCheck(IConnectionMultiplexer? redis = null, FlagsFileWarnings? fileWarnings = null) : IHealthCheck
{
    public Task<HealthCheckResult> CheckHealthAsync(HealthCheckContext context, CancellationToken cancellationToken = default)
    {
        if (redis is { IsConnected: false })
        {
            return Task.FromResult(HealthCheckResult.Degraded("Redis is out of reach: serving the last flags loaded; reconnecting."));
        }

        if (fileWarnings?.LastError is { } error)
        {
            return Task.FromResult(HealthCheckResult.Degraded($"The flags file does not parse: serving the last good flags. {error}"));
        }

        return Task.FromResult(HealthCheckResult.Healthy());
    }
}
