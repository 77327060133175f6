using Frontend.Api.CatalogClient;
using HttpPerf.ServiceDefaults.Contract;
using Microsoft.Extensions.Http.Resilience;
using Microsoft.Extensions.Options;
using Polly;
using Polly.Hedging;

namespace Frontend.Api.Replicas;

/// <summary>
/// The fix for a slow or stuck replica, as Linkerd's balancer, "The Tail at Scale" (Dean and Barroso, 2013) and gRPC's
/// hedging (gRFC A6) do it: each attempt goes to the replica with the lowest recent latency times load
/// (<see cref="ReplicaSet"/>); when a call's first attempt has not answered its headers within about the p95 of that
/// call's recent answers (<see cref="HedgeDelay"/>), a second attempt goes to a <em>different</em> replica, the first to
/// answer wins and the other is cancelled; a replica whose attempts time out, are refused or keep losing is left out
/// of the choice until it answers its health probe again; and hedges spend a budget that every call refills a little
/// (<see cref="HedgeBudget"/>), so a slow Catalog as a whole is not asked twice for everything.
/// Polly's hedging strategy runs the attempts and cancels the loser; service discovery resolves the replicas. What
/// neither has is written here: the choice of replica per attempt (the discovery's round robin is internal and shared
/// by every call), the ejection, the learnt delay and the budget. Its page: docs/pitfalls/Frontend.Replicas.md.
/// </summary>
public sealed class HedgedReplicas([FromKeyedServices(PerfMode.Optimized)] ICatalogApi catalog) : ICatalogReplicas
{
    /// <summary>
    /// The named client: the template's retry and its service discovery handler taken out, and in their place the
    /// hedging pipeline (total timeout, hedging, attempt timeout) over <see cref="ReplicaRouting"/>, which sends each
    /// attempt to the replica it chose.
    /// </summary>
    public static IHttpClientBuilder Configure(IHttpClientBuilder client)
    {
        // Experimental since Microsoft.Extensions.Http.Resilience 8.x, and the one way to undo a default handler for one client.
#pragma warning disable EXTEXP0001
        client.RemoveAllResilienceHandlers();
#pragma warning restore EXTEXP0001
        client.ConfigureAdditionalHttpMessageHandlers(static (handlers, _) => RemoveServiceDiscoveryHandler(handlers));
        client.AddResilienceHandler("catalog-replicas", static (pipeline, context) =>
        {
            var options = context.ServiceProvider.GetRequiredService<IOptions<ReplicaOptions>>().Value;
            var delay = context.ServiceProvider.GetRequiredService<HedgeDelay>();
            var budget = context.ServiceProvider.GetRequiredService<HedgeBudget>();
            pipeline
                .AddTimeout(options.TotalTimeout)
                .AddHedging(new HedgingStrategyOptions<HttpResponseMessage>
                {
                    // One hedge when the first attempt is slow, and one more attempt if an attempt fails outright.
                    MaxHedgedAttempts = 2,
                    ShouldHandle = static args => ValueTask.FromResult(HttpClientResiliencePredicates.IsTransient(args.Outcome)),
                    DelayGenerator = args => ValueTask.FromResult(HedgeAfter(args.Context, delay, budget)),
                    ActionGenerator = args => Hedge(args, budget),
                })
                .AddTimeout(options.AttemptTimeout);
        });
        return client.AddHttpMessageHandler(static services => ActivatorUtilities.CreateInstance<ReplicaRouting>(services))
            .CountCatalogAttempts(PerfMode.Optimized, again: CatalogAttempts.Hedge);
    }

    public Task<HttpResponseMessage> GetProductsResponseAsync(CancellationToken cancellationToken) => catalog.GetProductsResponseAsync(cancellationToken);

    public Task<HttpResponseMessage> GetBaselineResponseAsync(CancellationToken cancellationToken) => catalog.GetBaselineResponseAsync(cancellationToken);

    // Only a request that is safe to send twice is hedged: a GET or HEAD, which has no body to send again. Any other
    // waits for its one attempt (Infinite: Polly then starts the next attempt only when one fails).
    private static TimeSpan HedgeAfter(ResilienceContext context, HedgeDelay delay, HedgeBudget budget) =>
        context.GetRequestMessage() is { } request && IsSafe(request) && budget.HasToken
            ? delay.For(request.RequestUri!.AbsolutePath)
            : Timeout.InfiniteTimeSpan;

    private static Func<ValueTask<Outcome<HttpResponseMessage>>>? Hedge(HedgingActionGeneratorArguments<HttpResponseMessage> args, HedgeBudget budget)
    {
        if (args.PrimaryContext.GetRequestMessage() is not { } primary || !IsSafe(primary))
        {
            return null;
        }

        budget.Spend();
        args.ActionContext.SetRequestMessage(Copy(primary));
        return () => args.Callback(args.ActionContext);
    }

    private static bool IsSafe(HttpRequestMessage request) =>
        (request.Method == HttpMethod.Get || request.Method == HttpMethod.Head) && request.Content is null;

    // A second message for the same GET: a message is sent once. Its options (ReplicaRouting's record of the replicas
    // this call has tried, the telemetry's) are the primary's, so every attempt of the call shares them.
    private static HttpRequestMessage Copy(HttpRequestMessage primary)
    {
        var copy = new HttpRequestMessage(primary.Method, primary.RequestUri) { Version = primary.Version, VersionPolicy = primary.VersionPolicy };
        foreach (var header in primary.Headers)
        {
            copy.Headers.TryAddWithoutValidation(header.Key, header.Value);
        }

        foreach (var option in primary.Options)
        {
            ((IDictionary<string, object?>)copy.Options)[option.Key] = option.Value;
        }

        return copy;
    }

    // ServiceDefaults adds service discovery's handler to every client; here ReplicaRouting resolves the replicas
    // itself, one per attempt. The handler's type is internal to Microsoft.Extensions.ServiceDiscovery, so it is
    // found by name, and its absence fails loudly rather than leave two handlers choosing replicas.
    private static void RemoveServiceDiscoveryHandler(IList<DelegatingHandler> handlers)
    {
        const string ServiceDiscoveryHandler = "Microsoft.Extensions.ServiceDiscovery.Http.ResolvingHttpDelegatingHandler";
        var index = handlers.ToList().FindIndex(h => h.GetType().FullName == ServiceDiscoveryHandler);
        if (index < 0)
        {
            throw new InvalidOperationException($"{ServiceDiscoveryHandler} is not among the Catalog client's handlers: has Microsoft.Extensions.ServiceDiscovery renamed it?");
        }

        handlers.RemoveAt(index);
    }
}
