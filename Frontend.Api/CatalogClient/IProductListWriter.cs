using HttpPerf.ServiceDefaults.Contract;

namespace Frontend.Api.CatalogClient;

/// <summary>
/// Pitfall <c>Frontend.CatalogClient</c>: how the Catalog's 25 MB answer is read, mapped and passed on.
/// Every rung writes the same view models; they differ in how much of the body is held at once, and in what is made per product.
/// Its page, with the rungs measured side by side: docs/pitfalls/Frontend.CatalogClient.md.
/// </summary>
public interface IProductListWriter
{
    public const string Flag = Pitfalls.FrontendCatalogClient;

    Task WriteProductsAsync(HttpContext context, CancellationToken cancellationToken);
}
