using Frontend.Api.CatalogClient;
using HttpPerf.ServiceDefaults.Contract;

namespace Frontend.Api.Replicas;

/// <summary>
/// What the Aspire template ships, and every service here used: the client defaults of ServiceDefaults, the standard
/// resilience handler (retry after a 20 s attempt timeout) over service discovery's round robin. A replica that is
/// frozen, starved or cut off keeps its connections open and silent, so each call that the round robin hands it waits
/// out the whole attempt timeout before the retry takes the next replica; and since the round robin is shared by every
/// call, the next call's first attempt lands on the stuck replica again. Nothing remembers which replica failed.
/// Its page: docs/pitfalls/Frontend.Replicas.md.
/// </summary>
public sealed class RetryAfterTimeout([FromKeyedServices(PerfMode.Naive)] ICatalogApi catalog) : ICatalogReplicas
{
    /// <summary>The named client: the template's pipeline as ServiceDefaults gives every client, and the attempts counted.</summary>
    public static IHttpClientBuilder Configure(IHttpClientBuilder client) => client.CountCatalogAttempts(PerfMode.Naive, again: CatalogAttempts.Retry);

    public Task<HttpResponseMessage> GetProductsResponseAsync(CancellationToken cancellationToken) => catalog.GetProductsResponseAsync(cancellationToken);

    public Task<HttpResponseMessage> GetProductsAfterResponseAsync(int after, string silentReplica, CancellationToken cancellationToken) =>
        catalog.GetProductsAfterResponseAsync(after, silentReplica, cancellationToken);

    public Task<HttpResponseMessage> GetBaselineResponseAsync(CancellationToken cancellationToken) => catalog.GetBaselineResponseAsync(cancellationToken);
}
