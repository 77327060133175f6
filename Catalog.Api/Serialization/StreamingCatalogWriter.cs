using Catalog.Api.Data;
using HttpPerf.ServiceDefaults.Http;

namespace Catalog.Api.Serialization;

/// <summary>
/// The fix: System.Text.Json (source-generated, no reflection) serializes rows as the SQLite reader
/// yields them, straight into the response pipe. Memory holds one small buffer, not the catalog; the
/// first bytes leave as soon as the first rows are read; nothing touches the disk.
/// Measured at 25.8 MB through the Gateway (docs/results/bench): p50 239 ms (0.36x naive), Catalog.Api peak working set 111 MB
/// (0.32x), no temp file, 57.6 KB a write (LargeWrites).
/// </summary>
public sealed class StreamingCatalogWriter(CatalogStore store) : ICatalogWriter
{
    // The same source-generated metadata, with a 64 KB serializer buffer for 64 KB writes (LargeWrites).
    private static readonly CatalogJsonContext Json = new(LargeWrites.For(CatalogJsonContext.Default.Options));

    public Task WriteAllProductsAsync(HttpContext context, CancellationToken cancellationToken) =>
        LargeWrites.WriteAsJsonAsync(context.Response, store.StreamAllAsync(cancellationToken), Json.IAsyncEnumerableProduct, cancellationToken);
}
