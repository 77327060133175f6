using HttpPerf.ServiceDefaults.Contract;

namespace Frontend.Api.Blocking;

/// <summary>
/// Pitfall <c>Frontend.Blocking</c>: one product's page (<c>GET /products/{id}</c>), fetched from Catalog.Api, which
/// takes a store's round trip to answer. Every rung writes the same bytes; they differ in whether a thread-pool thread
/// waits through that round trip, and so in how many requests of the whole service queue behind it.
/// Its page, with the rungs measured side by side: docs/pitfalls/Frontend.Blocking.md.
/// </summary>
public interface IProductPageWriter
{
    public const string Flag = Pitfalls.FrontendBlocking;

    Task WriteProductAsync(int id, HttpContext context, CancellationToken cancellationToken);
}
