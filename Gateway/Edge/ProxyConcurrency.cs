using System.Diagnostics.Metrics;
using System.Globalization;
using System.Threading.RateLimiting;
using HttpPerf.ServiceDefaults.Telemetry;
using Microsoft.Extensions.Options;

namespace Gateway.Edge;

/// <summary>
/// How many proxied requests the Gateway serves at once (<see cref="GatewayOptions.MaxConcurrentRequests"/>) and
/// queues (<see cref="GatewayOptions.MaxQueuedRequests"/>): one <see cref="ConcurrencyLimiter"/>, first in YARP's
/// pipeline, so it holds every proxied route and nothing else (health, admin and the landing page stay reachable
/// while the proxy is full). Past both, the answer is a 429 problem with <c>Retry-After</c>, counted in
/// <c>httpperf.gateway.rejected</c> by route.
/// <para>
/// Not ASP.NET Core's rate limiting middleware: its endpoint limiter is a partitioned one, whose heartbeat wakes the
/// process every 100 ms for ever, idle or not (System.Threading.RateLimiting's <c>DefaultPartitionedRateLimiter</c>):
/// an idle Gateway's timer thread woke 39 times a second with it and 5 without, and the Gateway cost 0.5% of a core
/// at rest with it and 0.2% without (docs/deploy.md, "The swarm at rest"). A <see cref="ConcurrencyLimiter"/> has no timer.
/// </para>
/// </summary>
public sealed class ProxyConcurrency(IOptions<GatewayOptions> options) : IDisposable
{
    private const int RetryAfterSeconds = 1;

    private static readonly Counter<long> Rejected = PerfTelemetry.Meter.CreateCounter<long>(
        "httpperf.gateway.rejected", "{request}", "Proxied requests refused with 429 because the Gateway's concurrency limit and queue were full.");

    private readonly ConcurrencyLimiter _limiter = new(new ConcurrencyLimiterOptions
    {
        PermitLimit = options.Value.MaxConcurrentRequests,
        QueueLimit = options.Value.MaxQueuedRequests,
        QueueProcessingOrder = QueueProcessingOrder.OldestFirst,
    });

    /// <summary>The step of YARP's pipeline that admits a request, queues it, or refuses it.</summary>
    public async Task AdmitAsync(HttpContext context, Func<Task> next)
    {
        RateLimitLease lease;
        try
        {
            lease = await _limiter.AcquireAsync(1, context.RequestAborted);
        }
        catch (OperationCanceledException) when (context.RequestAborted.IsCancellationRequested)
        {
            return; // The client left while its request waited: no one to answer.
        }

        using (lease)
        {
            if (lease.IsAcquired)
            {
                await next();
                return;
            }
        }

        Rejected.Add(1, new KeyValuePair<string, object?>("http.route", context.GetEndpoint()?.DisplayName));
        context.Response.Headers.RetryAfter = RetryAfterSeconds.ToString(CultureInfo.InvariantCulture);
        await TypedResults.Problem(
            statusCode: StatusCodes.Status429TooManyRequests,
            title: "The Gateway is at its concurrency limit.",
            detail: $"Retry after {RetryAfterSeconds} s.").ExecuteAsync(context);
    }

    public void Dispose() => _limiter.Dispose();
}
