using HttpPerf.ServiceDefaults.Flags;
namespace Frontend.Api.CatalogClient;

/// <summary>
/// Pitfall <c>Frontend.CatalogClient</c>: how the Catalog's 25 MB answer is read, mapped and passed on.
/// Both implementations write the same view models; they differ in how much of the body is held at once.
/// </summary>
public interface IProductListWriter
{
    public const string Flag = Pitfalls.FrontendCatalogClient;

    Task WriteProductsAsync(HttpContext context, CancellationToken cancellationToken);
}
