using Frontend.Api.CatalogClient;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.ServiceDefaults.Hedging;
using Microsoft.Extensions.Options;
using Polly;

namespace Frontend.Api.Replicas;

/// <summary>
/// The fix for a slow or stuck replica, as Linkerd's balancer, "The Tail at Scale" (Dean and Barroso, 2013) and gRPC's
/// hedging (gRFC A6) do it: each attempt goes to the replica with the lowest recent latency times load
/// (<see cref="ReplicaSet"/>); when a call's first attempt has not answered its headers within about the p95 of that
/// call's recent answers (<see cref="HedgeDelay{TOptions}"/>), a second attempt goes to a <em>different</em> replica,
/// the first to answer wins and the other is cancelled; a replica whose attempts time out, are refused or keep losing is left out
/// of the choice until it answers its health probe again; and hedges spend a budget that every call refills a little
/// (<see cref="HedgeBudget{TOptions}"/>), so a slow Catalog as a whole is not asked twice for everything.
/// Polly's hedging strategy (<see cref="HedgingStrategy"/>, which the Gateway's routes share) runs the attempts and
/// cancels the loser; service discovery resolves the replicas. What
/// neither has is written here: the choice of replica per attempt (the discovery's round robin is internal and shared
/// by every call), the ejection, the learnt delay and the budget. Its page: docs/pitfalls/Frontend.Replicas.md.
/// </summary>
public sealed class HedgedReplicas(
    [FromKeyedServices(PerfMode.Optimized)] ICatalogApi catalog, BodySilence<ReplicaOptions> silence, HedgeBudget<ReplicaOptions> budget,
    IOptions<ReplicaOptions> options, ILogger<HedgedReplicas> logger) : ICatalogReplicas
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
            var delay = context.ServiceProvider.GetRequiredService<HedgeDelay<ReplicaOptions>>();
            var budget = context.ServiceProvider.GetRequiredService<HedgeBudget<ReplicaOptions>>();
            pipeline
                .AddTimeout(options.TotalTimeout)
                .AddHedging(HedgingStrategy.For(delay, budget, slow: static request => request.RequestUri!.AbsolutePath, again: static _ => true))
                .AddTimeout(options.AttemptTimeout);
        });
        return client.AddHttpMessageHandler(static services => ActivatorUtilities.CreateInstance<ReplicaRouting>(services))
            .CountCatalogAttempts(PerfMode.Optimized, again: CatalogAttempts.Hedge);
    }

    /// <summary>The product list, its body read on from another replica if its own goes silent or fails mid-body (<see cref="ResumingCatalogContent{TOptions}"/>).</summary>
    public async Task<HttpResponseMessage> GetProductsResponseAsync(CancellationToken cancellationToken)
    {
        var response = await catalog.GetProductsResponseAsync(cancellationToken);
        if (response.IsSuccessStatusCode)
        {
            response.Content = new ResumingCatalogContent<ReplicaOptions>(response, catalog.GetProductsAfterResponseAsync, silence, budget, options.Value.MaxResumes, logger);
        }

        return response;
    }

    public Task<HttpResponseMessage> GetProductsAfterResponseAsync(int after, string silentReplica, CancellationToken cancellationToken) =>
        catalog.GetProductsAfterResponseAsync(after, silentReplica, cancellationToken);

    public Task<HttpResponseMessage> GetBaselineResponseAsync(CancellationToken cancellationToken) => catalog.GetBaselineResponseAsync(cancellationToken);

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
