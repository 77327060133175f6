using System.Globalization;

namespace Frontend.Api.CatalogClient;

/// <summary>What the storefront shows for a product: display-ready, not a copy of the catalog row.</summary>
public sealed record ProductView(
    int Id,
    string Sku,
    string Title,
    string Summary,
    string Brand,
    string Category,
    string Price,
    string Availability,
    string Url)
{
    public static ProductView From(CatalogProduct product) => new(
        product.Id,
        product.Sku,
        Title: $"{product.Brand} {product.Name}",
        Summary: product.Description,
        product.Brand,
        product.Category,
        Price: string.Create(CultureInfo.InvariantCulture, $"EUR {product.Price:0.00}"),
        Availability: product.Stock switch
        {
            0 => "sold out",
            < 10 => "low stock",
            _ => "in stock",
        },
        Url: $"/products/{product.Sku.ToLowerInvariant()}");
}
