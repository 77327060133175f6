using System.Diagnostics.Metrics;
using System.Globalization;
using System.Threading.RateLimiting;
using HttpPerf.ServiceDefaults.Telemetry;
using HttpPerf.ServiceDefaults;
using Microsoft.AspNetCore.RateLimiting;
using Microsoft.Extensions.Options;

namespace Gateway.Edge;

/// <summary>
/// How many proxied requests the Gateway serves at once (<see cref="GatewayOptions.MaxConcurrentRequests"/>) and
/// queues (<see cref="GatewayOptions.MaxQueuedRequests"/>), with ASP.NET Core's concurrency limiter on every YARP
/// route (<c>"RateLimiterPolicy": "proxy"</c> in appsettings.json). Past both, the answer is a 429 problem with
/// <c>Retry-After</c>, counted in <c>httpperf.gateway.rejected</c> by route. Health, admin and the landing page
/// are not proxied routes, so they stay reachable while the proxy is full.
/// </summary>
public static class ProxyConcurrency
{
    public const string Policy = "proxy";
    private const int RetryAfterSeconds = 1;

    private static readonly Counter<long> Rejected = PerfTelemetry.Meter.CreateCounter<long>(
        "httpperf.gateway.rejected", "{request}", "Proxied requests refused with 429 because the Gateway's concurrency limit and queue were full.");

    public static IServiceCollection AddProxyConcurrencyLimit(this IServiceCollection services)
    {
        services.AddRateLimiter(_ => { });
        services.AddOptions<RateLimiterOptions>().Configure<IOptions<GatewayOptions>>((options, gateway) =>
        {
            options.AddConcurrencyLimiter(Policy, limiter =>
            {
                limiter.PermitLimit = gateway.Value.MaxConcurrentRequests;
                limiter.QueueLimit = gateway.Value.MaxQueuedRequests;
                limiter.QueueProcessingOrder = QueueProcessingOrder.OldestFirst;
            });
            options.OnRejected = RejectAsync;
        });
        return services;
    }

    private static async ValueTask RejectAsync(OnRejectedContext rejected, CancellationToken cancellationToken)
    {
        var context = rejected.HttpContext;
        Rejected.Add(1, new KeyValuePair<string, object?>("http.route", context.GetEndpoint()?.DisplayName));
        context.Response.Headers.RetryAfter = RetryAfterSeconds.ToString(CultureInfo.InvariantCulture);
        await TypedResults.Problem(
            statusCode: StatusCodes.Status429TooManyRequests,
            title: "The Gateway is at its concurrency limit.",
            detail: $"Retry after {RetryAfterSeconds} s.").ExecuteAsync(context);
    }
}
