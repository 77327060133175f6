using System.Net;
using System.Text.Json;
using Frontend.Api.CatalogClient;

namespace Frontend.Api.Blocking;

/// <summary>
/// What teams ship when a helper, an interface or a library is synchronous: the Catalog call made async-looking and
/// then waited on (<c>.GetAwaiter().GetResult()</c>), its body read with <c>ReadAsStream()</c> and a synchronous
/// deserializer, which waits on the socket while the Catalog sends the body. The thread-pool thread that runs the
/// request is held for the whole round trip, doing nothing; on a machine of 2 cores the pool starts with 2 threads and
/// adds only a few a second, so under concurrency every request of the service queues behind the blocked ones,
/// /health included. Its page: docs/pitfalls/Frontend.Blocking.md.
/// </summary>
public sealed class BlockingProductPageWriter(IHttpClientFactory clients) : IProductPageWriter
{
    public Task WriteProductAsync(int id, HttpContext context, CancellationToken cancellationToken) =>
        ProductPage.WriteAsync(GetProduct(id), context, cancellationToken);

    // The synchronous helper: it has no CancellationToken and no await, so it blocks where it waits.
    private CatalogProduct? GetProduct(int id)
    {
        var client = clients.CreateClient(ProductPage.Client);
        using var response = client.GetAsync(ProductPage.CatalogPath(id), HttpCompletionOption.ResponseHeadersRead).GetAwaiter().GetResult();
        if (response.StatusCode == HttpStatusCode.NotFound)
        {
            return null;
        }

        response.EnsureSuccessStatusCode();
        using var body = response.Content.ReadAsStream();
        return JsonSerializer.Deserialize(body, ProductPageJsonContext.Default.CatalogProduct);
    }
}
