using Frontend.Api.CatalogClient;
using HttpPerf.Catalog.Grpc;

namespace Frontend.Api.Grpc;

/// <summary>The generated <see cref="Product"/> message as the storefront's view: the JSON path's one mapping, <see cref="ProductView.From"/>.</summary>
internal static class ProductMessages
{
    public static ProductView ViewOf(Product product) => ProductView.From(new CatalogProduct(
        product.Id, product.Sku, product.Name, product.Description, product.Brand, product.Category, product.PriceCents / 100m, product.Stock));
}
