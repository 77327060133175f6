using Catalog.Api.Serialization;

namespace Microsoft.AspNetCore.Builder;

public static class CatalogApi
{
    public static IEndpointRouteBuilder MapCatalogApi(this IEndpointRouteBuilder app)
    {
        var api = app.MapGroup("/catalog").WithTags("Catalog");

        api.MapGet("/products", GetAllProducts)
            .WithSummary("Every product as one JSON array (about 25 MB at the default size).")
            .Produces<IEnumerable<Catalog.Api.Data.Product>>(contentType: "application/json");

        return app;
    }

    public static Task GetAllProducts(ICatalogWriter writer, HttpContext context, CancellationToken cancellationToken) =>
        writer.WriteAllProductsAsync(context, cancellationToken);
}
