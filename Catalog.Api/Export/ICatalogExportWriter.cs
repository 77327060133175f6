using HttpPerf.ServiceDefaults.Flags;

namespace Catalog.Api.Export;

/// <summary>
/// Pitfall <c>Catalog.WriteStrategy</c>: how a CSV export of every product (about 6 MB, one short row per
/// product) is written. Both implementations send the same bytes; they differ in how often they flush.
/// </summary>
public interface ICatalogExportWriter
{
    public const string Flag = Pitfalls.CatalogWriteStrategy;

    Task WriteExportAsync(HttpContext context, CancellationToken cancellationToken);
}
