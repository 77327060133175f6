using System.Net;
using System.Net.Http.Json;

namespace Frontend.Api.Blocking;

/// <summary>
/// Async all the way: the Catalog call and the read of its body are awaited, so while the Catalog answers the thread
/// goes back to the pool and serves other requests; a handful of threads carry hundreds of requests in flight, and
/// /health answers at once whatever the load. Same bytes as <see cref="BlockingProductPageWriter"/>.
/// Its page: docs/pitfalls/Frontend.Blocking.md.
/// </summary>
public sealed class AsyncProductPageWriter(IHttpClientFactory clients) : IProductPageWriter
{
    public async Task WriteProductAsync(int id, HttpContext context, CancellationToken cancellationToken)
    {
        var client = clients.CreateClient(ProductPage.Client);
        using var response = await client.GetAsync(ProductPage.CatalogPath(id), HttpCompletionOption.ResponseHeadersRead, cancellationToken);
        if (response.StatusCode == HttpStatusCode.NotFound)
        {
            await ProductPage.WriteAsync(null, context, cancellationToken);
            return;
        }

        response.EnsureSuccessStatusCode();
        var product = await response.Content.ReadFromJsonAsync(ProductPageJsonContext.Default.CatalogProduct, cancellationToken);
        await ProductPage.WriteAsync(product, context, cancellationToken);
    }
}
