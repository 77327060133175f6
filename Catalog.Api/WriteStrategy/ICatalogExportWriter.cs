using HttpPerf.ServiceDefaults.Contract;


namespace Catalog.Api.WriteStrategy;

/// <summary>
/// Pitfall <c>Catalog.WriteStrategy</c>: how a CSV export of every product (about 6 MB, one short row per
/// product) is written. Both implementations send the same bytes; they differ in how often they flush.
/// Its page, with the rungs measured side by side: docs/pitfalls/Catalog.WriteStrategy.md.
/// </summary>
public interface ICatalogExportWriter
{
    public const string Flag = Pitfalls.CatalogWriteStrategy;

    Task WriteExportAsync(HttpContext context, CancellationToken cancellationToken);
}
