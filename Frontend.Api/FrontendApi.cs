using Frontend.Api.CatalogClient;

using Microsoft.Extensions.Options;

namespace Frontend.Api;

public static class FrontendApi
{
    public static IEndpointRouteBuilder MapFrontendApi(this IEndpointRouteBuilder app)
    {
        app.MapGet("/products", GetProducts)
            .WithTags("Products")
            .WithSummary("Every catalog product as a storefront view model, read from Catalog.Api.")
            .Produces<IEnumerable<ProductView>>(contentType: "application/json")
            .ProducesProblem(StatusCodes.Status502BadGateway);

        if (app.ServiceProvider.GetRequiredService<IOptions<FrontendOptions>>().Value.EnableBaseline)
        {
            app.MapGet("/products/baseline", RelayBaseline)
                .WithTags("Products")
                .WithSummary("Catalog.Api's in-memory bytes relayed without parsing: the benchmark's limit for the hop.");
        }

        return app;
    }

    public static Task GetProducts(IProductListWriter writer, HttpContext context, CancellationToken cancellationToken) =>
        writer.WriteProductsAsync(context, cancellationToken);

    /// <summary>The least a hop can do: copy the Catalog's bytes to the caller as they arrive.</summary>
    public static async Task RelayBaseline(ICatalogApi catalog, HttpContext context, CancellationToken cancellationToken)
    {
        using var response = await catalog.GetBaselineResponseAsync(cancellationToken);
        response.EnsureSuccessStatusCode();
        context.Response.ContentType = "application/json";
        await response.Content.CopyToAsync(context.Response.Body, cancellationToken);
    }
}
