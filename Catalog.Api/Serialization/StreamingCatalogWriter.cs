using Catalog.Api.Data;

namespace Catalog.Api.Serialization;

/// <summary>
/// The fix to copy first: no MVC formatter, no list. <c>WriteAsJsonAsync</c> (source-generated
/// <c>JsonSerializer.SerializeAsync</c>) enumerates the SQLite reader's rows as <see cref="Product"/> objects
/// (<see cref="CatalogStore.StreamAllAsync"/>) and writes each into the response as it is read: memory holds a few
/// buffers, not the catalog, the first bytes leave with the first rows, and nothing touches the disk. Each row still
/// becomes a record and five UTF-16 strings that the serializer encodes straight back to UTF-8.
/// Measured at 25.8 MB through the Gateway (docs/results/bench, a quiet 2-core machine): p50 178 ms (0.48x naive), first
/// byte 1.5 ms, Catalog.Api 202 ms of CPU (0.54x) and 52 MB allocated a request, peak working set 148 MB (0.49x), no
/// temp file, 14.8 KB a write. 5 lines: 8 fewer than naive.
/// </summary>
public sealed class StreamingCatalogWriter(CatalogStore store) : ICatalogWriter
{
    public Task WriteAllProductsAsync(HttpContext context, CancellationToken cancellationToken) =>
        context.Response.WriteAsJsonAsync(store.StreamAllAsync(cancellationToken), CatalogJsonContext.Default.IAsyncEnumerableProduct, contentType: null, cancellationToken);
}
