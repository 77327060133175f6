using Frontend.Api.CatalogClient;
using Frontend.Api.Products;

namespace Microsoft.AspNetCore.Builder;

public static class FrontendApi
{
    public static IEndpointRouteBuilder MapFrontendApi(this IEndpointRouteBuilder app)
    {
        app.MapGet("/products", GetProducts)
            .WithTags("Products")
            .WithSummary("Every catalog product as a storefront view model, read from Catalog.Api.")
            .Produces<IEnumerable<ProductView>>(contentType: "application/json")
            .ProducesProblem(StatusCodes.Status502BadGateway);

        return app;
    }

    public static Task GetProducts(IProductListWriter writer, HttpContext context, CancellationToken cancellationToken) =>
        writer.WriteProductsAsync(context, cancellationToken);
}
