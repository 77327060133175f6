using HttpPerf.ServiceDefaults.Http;

namespace Frontend.Api.CatalogClient;

/// <summary>
/// The limit: read the Catalog's answer as it arrives (Refit returns the response at its headers) one product at a
/// time (<see cref="CatalogProductReader"/>), and write each product's view straight into the response
/// (<see cref="ProductViewWriter"/>), in 230 KB writes (LargeWrites). Memory holds two buffers, not the catalog; the
/// client gets its first bytes while the Catalog is still sending; and no object or string is made per product.
/// Its page, with the rungs measured side by side: docs/pitfalls/Frontend.CatalogClient.md.
/// </summary>
public sealed class FieldByFieldProductListWriter(ICatalogApi catalog) : IProductListWriter
{
    public async Task WriteProductsAsync(HttpContext context, CancellationToken cancellationToken)
    {
        // Disposing the response, however the write ends, gives the Catalog connection back (or closes it mid-body).
        using var response = await catalog.GetProductsResponseAsync(cancellationToken);
        response.EnsureSuccessStatusCode();
        await using var products = new CatalogProductReader(await response.Content.ReadAsStreamAsync(cancellationToken));
        using var writer = LargeWrites.RentJsonWriter(context.Response);
        var json = writer.Json;
        var views = new ProductViewWriter(json);
        json.WriteStartArray();
        while (await products.ReadAsync(cancellationToken))
        {
            views.Write(products);
            await LargeWrites.FlushIfFullAsync(json, cancellationToken);
        }

        json.WriteEndArray();
        await json.FlushAsync(cancellationToken);
    }
}
