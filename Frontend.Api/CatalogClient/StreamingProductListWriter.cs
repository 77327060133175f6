using Frontend.Api.Products;
using HttpPerf.ServiceDefaults.Http;

namespace Frontend.Api.CatalogClient;

/// <summary>
/// The fix: Refit's <c>IAsyncEnumerable</c> method reads with ResponseHeadersRead and deserializes one
/// product at a time off the socket; each is mapped and serialized into the response as it arrives.
/// Memory holds a few buffers, and the client gets its first bytes while the Catalog is still sending.
/// Measured end to end at 25 MB, every hop optimized (docs/results/bench): p50 552 ms (0.47x; 360 ms in the large-writes
/// comparison run), Frontend.Api peak working set 111 MB (0.11x), and 136 MB under 16 concurrent fetches (0.03x).
/// </summary>
public sealed class StreamingProductListWriter(ICatalogApi catalog) : IProductListWriter
{
    // The same source-generated metadata, with a 64 KB serializer buffer for 64 KB writes (LargeWrites).
    private static readonly FrontendJsonContext Json = new(LargeWrites.For(FrontendJsonContext.Default.Options));

    public async Task WriteProductsAsync(HttpContext context, CancellationToken cancellationToken)
    {
        // The enumerator is ours to dispose. When a client leaves mid-write, JsonSerializer returns without
        // disposing it in about 1 request in 20 (measured: 15 of 300), and an undisposed Refit stream keeps its
        // Catalog connection open, so the Catalog's request hangs on a full socket for minutes.
        await using var products = catalog.StreamProductsAsync(cancellationToken).GetAsyncEnumerator(cancellationToken);
        await LargeWrites.WriteAsJsonAsync(context.Response, Remaining(products).Select(ProductView.From), Json.IAsyncEnumerableProductView, cancellationToken);
    }

    private static async IAsyncEnumerable<CatalogProduct> Remaining(IAsyncEnumerator<CatalogProduct> products)
    {
        while (await products.MoveNextAsync())
        {
            yield return products.Current;
        }
    }
}
