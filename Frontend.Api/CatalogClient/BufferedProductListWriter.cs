using System.Text.Json;
using HttpPerf.ServiceDefaults.Selection;

namespace Frontend.Api.CatalogClient;

/// <summary>
/// What teams ship: <c>GetAsync</c> + <c>ReadAsStringAsync</c> + <c>Deserialize</c>. ReadAsStringAsync
/// first loads the whole body into a MemoryStream (what HttpClient's default ResponseContentRead does),
/// then decodes it into a UTF-16 string twice its size, then builds the full list, then the full list
/// of view models. Nothing is sent until all of that exists, and all of it is large-object-heap garbage.
/// Its page, with the rungs measured side by side: docs/pitfalls/Frontend.CatalogClient.md.
/// </summary>
public sealed class BufferedProductListWriter(ICatalogApi catalog, RequestVariants variants) : IProductListWriter
{
    public async Task WriteProductsAsync(HttpContext context, CancellationToken cancellationToken)
    {
        using var response = await catalog.GetProductsResponseAsync(cancellationToken);
        response.EnsureSuccessStatusCode();
        string json = await response.Content.ReadAsStringAsync(cancellationToken);
        // The buffered body, and the string decoded from it (UTF-16: two bytes a character).
        variants.Buffered(inMemory: (response.Content.Headers.ContentLength ?? 0) + json.Length * sizeof(char));
        List<CatalogProduct> products = JsonSerializer.Deserialize(json, FrontendJsonContext.Default.ListCatalogProduct) ?? [];
        List<ProductView> views = products.Select(ProductView.From).ToList();
        await context.Response.WriteAsJsonAsync(views, FrontendJsonContext.Default.ListProductView, contentType: null, cancellationToken);
    }
}
