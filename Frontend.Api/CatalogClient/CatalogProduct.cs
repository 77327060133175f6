namespace Frontend.Api.CatalogClient;

/// <summary>A product as Catalog.Api serves it.</summary>
public sealed record CatalogProduct(
    int Id,
    string Sku,
    string Name,
    string Description,
    string Brand,
    string Category,
    decimal Price,
    int Stock);
