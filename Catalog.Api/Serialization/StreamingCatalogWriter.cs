using Catalog.Api.Data;

namespace Catalog.Api.Serialization;

/// <summary>
/// The fix to copy first: no MVC formatter, no list. <c>WriteAsJsonAsync</c> (source-generated
/// <c>JsonSerializer.SerializeAsync</c>) enumerates the SQLite reader's rows as <see cref="Product"/> objects
/// (<see cref="CatalogStore.StreamAllAsync"/>) and writes each into the response as it is read: memory holds a few
/// buffers, not the catalog, the first bytes leave with the first rows, and nothing touches the disk. Each row still
/// becomes a record and five UTF-16 strings that the serializer encodes straight back to UTF-8.
/// Its page, with the rungs measured side by side: docs/pitfalls/Catalog.Serialization.md.
/// </summary>
public sealed class StreamingCatalogWriter(CatalogStore store) : ICatalogWriter
{
    public Task WriteAllProductsAsync(HttpContext context, int after, CancellationToken cancellationToken) =>
        context.Response.WriteAsJsonAsync(store.StreamAllAsync(after, cancellationToken), CatalogJsonContext.Default.IAsyncEnumerableProduct, contentType: null, cancellationToken);
}
