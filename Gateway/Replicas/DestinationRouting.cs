using System.Diagnostics;
using System.Diagnostics.Metrics;
using System.Net;
using System.Runtime.CompilerServices;
using HttpPerf.ServiceDefaults.Hedging;
using HttpPerf.ServiceDefaults.Telemetry;
using Microsoft.Extensions.Options;
using Yarp.ReverseProxy;
using Yarp.ReverseProxy.Health;
using Yarp.ReverseProxy.Model;

namespace Gateway.Replicas;

/// <summary>
/// Under the hedging strategy of YARP's forwarding client, once per attempt of a <see cref="HedgedCall"/>, as
/// Frontend.Api's <c>ReplicaRouting</c> does for its Catalog calls: sends the attempt to a destination the call has not
/// tried, and tells how it went. An answer teaches <see cref="HedgeDelay{TOptions}"/> how long headers take on this
/// route and clears its destination's strikes; a failure, a 5xx or a lost race (cancelled while the client still
/// waits) is a strike, and after <see cref="HedgingOptions.EjectAfterStrikes"/> in a row YARP's own passive health
/// state takes the destination out for its cluster's reactivation period. A download's body, and the Catalog's product
/// list, are read on elsewhere if their destination stops mid-way (<see cref="ResumingRangeContent"/>,
/// <see cref="ResumingCatalogContent{TOptions}"/>). Each attempt is a span
/// (<c>destination attempt 2 (hedge)</c>, with <c>gateway.destination</c>, <c>gateway.attempt.kind</c> and
/// <c>gateway.attempt.outcome</c>) and a count in <c>httpperf.gateway.attempts</c>.
/// Its page: docs/pitfalls/Frontend.Replicas.md.
/// </summary>
internal sealed partial class DestinationRouting(
    HedgeDelay<HedgingOptions> delay, HedgeBudget<HedgingOptions> budget, BodySilence<HedgingOptions> silence, IOptions<HedgingOptions> options,
    IProxyStateLookup clusters, IDestinationHealthUpdater health, ILogger<DestinationRouting> logger) : DelegatingHandler
{
    private const string First = "first";
    private const string Hedge = "hedge";
    private static readonly TimeSpan DefaultReactivation = TimeSpan.FromSeconds(10);

    private static readonly Counter<long> Attempts = PerfTelemetry.Meter.CreateCounter<long>(
        "httpperf.gateway.attempts", "{attempt}", "Attempts of the Gateway's hedged GET and HEAD requests, by route, kind (first, hedge) and outcome (answered, failed, cancelled).");

    private readonly ConditionalWeakTable<DestinationState, StrongBox<int>> _strikes = [];

    protected override async Task<HttpResponseMessage> SendAsync(HttpRequestMessage request, CancellationToken cancellationToken)
    {
        if (HedgedCall.Of(request) is not { } call)
        {
            return await base.SendAsync(request, cancellationToken);
        }

        if (call.Next(request.RequestUri!) is not var (destination, address, number))
        {
            throw new HttpRequestException(HttpRequestError.ConnectionError, $"No destination of {call.Cluster} is left to try.");
        }

        var kind = number == 1 ? First : Hedge;
        if (kind == First)
        {
            budget.Earn();
        }

        request.RequestUri = address;
        using var span = PerfTelemetry.ActivitySource.StartActivity($"destination attempt {number} ({kind})");
        span?.SetTag("gateway.destination", destination.DestinationId);
        span?.SetTag("gateway.attempt.kind", kind);
        var outcome = "failed";
        var started = Stopwatch.GetTimestamp();
        try
        {
            var response = await base.SendAsync(request, cancellationToken);
            if ((int)response.StatusCode >= 500)
            {
                Strike(call, destination, "answered " + (int)response.StatusCode);
            }
            else
            {
                outcome = "answered";
                Clear(destination);
                call.Answered(destination);
                delay.Add(call.Route, Stopwatch.GetElapsedTime(started));
                if (ResumingRangeContent.Applies(response))
                {
                    // A download: its body can be read on from another destination if this one stops mid-way.
                    response.Content = new ResumingRangeContent(response, call, (rest, token) => base.SendAsync(rest, token), silence, budget, options.Value.MaxResumes, logger);
                }
                else if (call.ResumesAfterId && response.StatusCode == HttpStatusCode.OK)
                {
                    // The Catalog's product list: the products after the last whole one, from another destination.
                    // It coalesces what has arrived itself, as Relay/CoalescingContent would: the one copy of the body.
                    response.Content = new ResumingCatalogContent<HedgingOptions>(response, (after, silent, token) => RestOfCatalogAsync(request, call, after, silent, token),
                        silence, budget, options.Value.MaxResumes, logger)
                    {
                        Coalesces = true,
                    };
                }
            }

            return response;
        }
        catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
        {
            // Cancelled by the hedging (another attempt answered first) or YARP's activity timeout; a client that left
            // cancels every attempt, and that says nothing about the destination.
            outcome = "cancelled";
            if (!call.CallerLeft)
            {
                Strike(call, destination, $"no answer in {Stopwatch.GetElapsedTime(started).TotalMilliseconds:F0} ms");
            }

            throw;
        }
        catch (HttpRequestException failure)
        {
            Strike(call, destination, failure.HttpRequestError.ToString());
            throw;
        }
        finally
        {
            span?.SetTag("gateway.attempt.outcome", outcome);
            Attempts.Add(1, new("proxy.route_id", call.Route), new("gateway.attempt.kind", kind), new("gateway.attempt.outcome", outcome));
        }
    }

    // GET /catalog/products?after={id} of another destination, as the first attempt was sent but for its query.
    private Task<HttpResponseMessage> RestOfCatalogAsync(HttpRequestMessage first, HedgedCall call, int after, string silent, CancellationToken cancellationToken)
    {
        if (call.Elsewhere(silent) is not var (_, address))
        {
            throw new IOException($"No destination of {call.Cluster} but {silent} is left to read the rest of the catalog from.");
        }

        var rest = HedgedRequests.Copy(first);
        rest.RequestUri = new Uri($"{address.GetLeftPart(UriPartial.Path)}?after={after}");
        return base.SendAsync(rest, cancellationToken);
    }

    private void Clear(DestinationState destination)
    {
        if (_strikes.TryGetValue(destination, out var strikes))
        {
            Volatile.Write(ref strikes.Value, 0);
        }
    }

    private void Strike(HedgedCall call, DestinationState destination, string why)
    {
        // An attempt begun before its destination was left out and ending after says nothing new: counted, its strikes
        // would be waiting for the destination when it rejoins, and the first loss after would take it out again.
        if (destination.Health.Passive == DestinationHealth.Unhealthy)
        {
            return;
        }

        var strikes = _strikes.GetValue(destination, static _ => new StrongBox<int>());
        var count = Interlocked.Increment(ref strikes.Value);
        if (count < options.Value.EjectAfterStrikes || !clusters.TryGetCluster(call.Cluster, out var cluster))
        {
            return;
        }

        Volatile.Write(ref strikes.Value, 0);
        var period = cluster.Model.Config.HealthCheck?.Passive?.ReactivationPeriod ?? DefaultReactivation;
        health.SetPassive(cluster, destination, DestinationHealth.Unhealthy, period);
        LogLeftOut(destination.DestinationId, period.TotalSeconds, count, why);
    }

    [LoggerMessage(LogLevel.Warning, "Destination {Destination} left out for {Seconds} s after {Strikes} strikes in a row (last: {Why})")]
    private partial void LogLeftOut(string destination, double seconds, int strikes, string why);
}
