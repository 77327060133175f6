namespace Catalog.Api.Data;

/// <summary>A catalog row. Both writers serialize it to the same camelCase JSON.</summary>
public sealed record Product(
    int Id,
    string Sku,
    string Name,
    string Description,
    string Brand,
    string Category,
    decimal Price,
    int Stock);
