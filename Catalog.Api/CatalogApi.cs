using Catalog.Api.Data;
using Catalog.Api.Serialization;
using Microsoft.Extensions.Options;

namespace Microsoft.AspNetCore.Builder;

public static class CatalogApi
{
    public static IEndpointRouteBuilder MapCatalogApi(this IEndpointRouteBuilder app)
    {
        var api = app.MapGroup("/catalog").WithTags("Catalog");

        api.MapGet("/products", GetAllProducts)
            .WithSummary("Every product as one JSON array (about 25 MB at the default size).")
            .Produces<IEnumerable<Product>>(contentType: "application/json");

        if (app.ServiceProvider.GetRequiredService<IOptions<CatalogOptions>>().Value.EnableBaseline)
        {
            api.MapGet("/products/baseline", GetBaseline)
                .WithSummary("The same bytes as /catalog/products, serialized once and served from memory: the benchmark's limit.");
        }

        return app;
    }

    public static Task GetAllProducts(ICatalogWriter writer, HttpContext context, CancellationToken cancellationToken) =>
        writer.WriteAllProductsAsync(context, cancellationToken);

    public static async Task<IResult> GetBaseline(CatalogBaseline baseline, CancellationToken cancellationToken) =>
        Results.Bytes(await baseline.GetBytesAsync(cancellationToken), "application/json");
}
