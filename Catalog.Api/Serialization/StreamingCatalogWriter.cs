using Catalog.Api.Data;

namespace Catalog.Api.Serialization;

/// <summary>
/// The fix: System.Text.Json (source-generated, no reflection) serializes rows as the SQLite reader
/// yields them, straight into the response pipe. Memory holds one small buffer, not the catalog; the
/// first bytes leave as soon as the first rows are read; nothing touches the disk.
/// Measured at 25.8 MB through the Gateway (docs/results/bench): p50 301 ms (0.52x naive), Catalog.Api peak working set 111 MB (0.23x), no temp file.
/// </summary>
public sealed class StreamingCatalogWriter(CatalogStore store) : ICatalogWriter
{
    public Task WriteAllProductsAsync(HttpContext context, CancellationToken cancellationToken) =>
        context.Response.WriteAsJsonAsync(
            store.StreamAllAsync(cancellationToken),
            CatalogJsonContext.Default.IAsyncEnumerableProduct,
            contentType: null,
            cancellationToken);
}
