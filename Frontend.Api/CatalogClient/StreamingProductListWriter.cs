using System.Runtime.CompilerServices;
using System.Text.Json;

namespace Frontend.Api.CatalogClient;

/// <summary>
/// The fix to copy first: the naive writer's last line unchanged, fed from the socket instead of a list. Refit returns
/// the response at its headers, <see cref="JsonSerializer.DeserializeAsyncEnumerable{TValue}(Stream, System.Text.Json.Serialization.Metadata.JsonTypeInfo{TValue}, CancellationToken)"/>
/// hands over each product as soon as it has arrived, and <c>WriteAsJsonAsync</c> serializes each view as it is mapped,
/// all with the source-generated metadata. Memory holds a few buffers, not the catalog, and the client's first bytes
/// leave while the Catalog is still sending. Each product still becomes a record and five strings to read, and its view
/// a record and four strings more to write.
/// Its page, with the rungs measured side by side: docs/pitfalls/Frontend.CatalogClient.md.
/// </summary>
public sealed class StreamingProductListWriter(ICatalogApi catalog) : IProductListWriter
{
    public async Task WriteProductsAsync(HttpContext context, CancellationToken cancellationToken)
    {
        // Disposing the response, however the write ends, gives the Catalog connection back (or closes it mid-body).
        using var response = await catalog.GetProductsResponseAsync(cancellationToken);
        response.EnsureSuccessStatusCode();
        await using var body = await response.Content.ReadAsStreamAsync(cancellationToken);
        var products = JsonSerializer.DeserializeAsyncEnumerable(body, FrontendJsonContext.Default.CatalogProduct, cancellationToken);
        await context.Response.WriteAsJsonAsync(Views(products, cancellationToken), FrontendJsonContext.Default.IAsyncEnumerableProductView, contentType: null, cancellationToken);
    }

    private static async IAsyncEnumerable<ProductView> Views(IAsyncEnumerable<CatalogProduct?> products, [EnumeratorCancellation] CancellationToken cancellationToken)
    {
        await foreach (var product in products.WithCancellation(cancellationToken))
        {
            yield return ProductView.From(product ?? throw new JsonException("The Catalog's array holds a null product."));
        }
    }
}
