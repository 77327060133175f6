using HttpPerf.ServiceDefaults.Contract;

namespace Catalog.Api.Serialization;

/// <summary>
/// Pitfall <c>Catalog.Serialization</c>: how the whole catalog becomes the response body.
/// Every rung writes the same JSON array; they differ in where the bytes wait on the way out, and in what is made per row.
/// Its page, with the rungs measured side by side: docs/pitfalls/Catalog.Serialization.md.
/// </summary>
public interface ICatalogWriter
{
    public const string Flag = Pitfalls.CatalogSerialization;

    /// <summary>Writes the JSON array of every product whose id is above <paramref name="after"/> (0: the whole catalog).</summary>
    Task WriteAllProductsAsync(HttpContext context, int after, CancellationToken cancellationToken);
}
