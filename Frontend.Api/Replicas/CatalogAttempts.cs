using System.Diagnostics.Metrics;
using System.Diagnostics;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.ServiceDefaults.Telemetry;

namespace Frontend.Api.Replicas;

/// <summary>
/// The lesson's telemetry, the same for every rung: each attempt of a Catalog call is a span (<c>catalog attempt</c>:
/// the replica, first, retry or hedge, and how it ended: answered, failed or cancelled) and a count in
/// <c>httpperf.client.attempts</c>; each call records how many attempts it took in
/// <c>httpperf.client.attempts_per_call</c>, whose mean is the Catalog requests per product list. Both carry
/// <c>perf.flag</c> and <c>perf.variant</c>. Its page: docs/pitfalls/Frontend.Replicas.md.
/// </summary>
internal static class CatalogAttempts
{
    public const string First = "first";
    public const string Retry = "retry";
    public const string Hedge = "hedge";

    private static readonly HttpRequestOptionsKey<CallState> StateKey = new("catalog.attempts");

    private static readonly Counter<long> Attempts = PerfTelemetry.Meter.CreateCounter<long>(
        "httpperf.client.attempts", "{attempt}", "Attempts of Frontend.Api's Catalog calls, by kind (first, retry, hedge) and outcome (answered, failed, cancelled).");

    private static readonly Histogram<long> PerCall = PerfTelemetry.Meter.CreateHistogram<long>(
        "httpperf.client.attempts_per_call", "{attempt}", "Attempts one Catalog call took: its mean is the Catalog requests per product list.",
        advice: new InstrumentAdvice<long> { HistogramBucketBoundaries = [1, 2, 3, 4] });

    /// <summary>Counts the client's calls (outermost, around its resilience handler) and their attempts (innermost, one per attempt sent).</summary>
    public static IHttpClientBuilder CountCatalogAttempts(this IHttpClientBuilder client, string variant, string again)
    {
        client.ConfigureAdditionalHttpMessageHandlers((handlers, _) => handlers.Insert(0, new CallHandler(variant)));
        return client.AddHttpMessageHandler(() => new AttemptHandler(variant, again));
    }

    /// <summary>Whether the caller of this attempt's call has gone (its token cancelled), rather than the attempt alone.</summary>
    public static bool CallerLeft(HttpRequestMessage request) =>
        request.Options.TryGetValue(StateKey, out var state) && state.Caller.IsCancellationRequested;

    private sealed class CallState(CancellationToken caller)
    {
        public CancellationToken Caller { get; } = caller;

        public int Attempts;
    }

    private sealed class CallHandler(string variant) : DelegatingHandler
    {
        protected override async Task<HttpResponseMessage> SendAsync(HttpRequestMessage request, CancellationToken cancellationToken)
        {
            var state = new CallState(cancellationToken);
            request.Options.Set(StateKey, state);
            try
            {
                return await base.SendAsync(request, cancellationToken);
            }
            finally
            {
                PerCall.Record(Volatile.Read(ref state.Attempts), new(PerfTelemetry.FlagTag, Pitfalls.FrontendReplicas), new(PerfTelemetry.VariantTag, variant));
            }
        }
    }

    private sealed class AttemptHandler(string variant, string again) : DelegatingHandler
    {
        protected override async Task<HttpResponseMessage> SendAsync(HttpRequestMessage request, CancellationToken cancellationToken)
        {
            var number = request.Options.TryGetValue(StateKey, out var state) ? Interlocked.Increment(ref state.Attempts) : 1;
            var kind = number == 1 ? First : again;
            using var span = PerfTelemetry.ActivitySource.StartActivity($"catalog attempt {number} ({kind})");
            span?.SetTag("catalog.replica", request.RequestUri?.Authority);
            span?.SetTag("catalog.attempt.kind", kind);
            span?.SetTag("catalog.attempt.number", number);
            span?.SetTag(PerfTelemetry.VariantTag, variant);
            var outcome = "failed";
            try
            {
                var response = await base.SendAsync(request, cancellationToken);
                outcome = (int)response.StatusCode >= 500 ? "failed" : "answered";
                return response;
            }
            catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
            {
                outcome = "cancelled";
                throw;
            }
            finally
            {
                span?.SetTag("catalog.attempt.outcome", outcome);
                Attempts.Add(1, new(PerfTelemetry.FlagTag, Pitfalls.FrontendReplicas), new(PerfTelemetry.VariantTag, variant),
                    new("catalog.attempt.kind", kind), new("catalog.attempt.outcome", outcome));
            }
        }
    }
}
