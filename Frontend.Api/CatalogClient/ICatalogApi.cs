using Refit;

namespace Frontend.Api.CatalogClient;

/// <summary>Catalog.Api through Refit. Both variants take the raw response and decide how to read its body.</summary>
public interface ICatalogApi
{
    /// <summary>The raw response: the caller decides how to read the body.</summary>
    [Get("/catalog/products")]
    Task<HttpResponseMessage> GetProductsResponseAsync(CancellationToken cancellationToken);

    /// <summary>The catalog's bytes from memory (benchmark only), read as a stream and relayed untouched.</summary>
    [Get("/catalog/products/baseline")]
    Task<HttpResponseMessage> GetBaselineResponseAsync(CancellationToken cancellationToken);
}
