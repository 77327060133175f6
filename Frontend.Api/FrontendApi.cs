using Frontend.Api.Blocking;
using Frontend.Api.CatalogClient;
using Frontend.Api.Grpc;

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

        app.MapGet("/products/grpc", GetProductsOverGrpc)
            .WithTags("Products")
            .WithSummary("The same product list, byte for byte, read from Catalog.Api over gRPC; ?batch= products per streamed message (1 to 10,000).")
            .Produces<IEnumerable<ProductView>>(contentType: "application/json")
            .ProducesValidationProblem()
            .ProducesProblem(StatusCodes.Status502BadGateway)
            .ProducesProblem(StatusCodes.Status503ServiceUnavailable)
            .ProducesProblem(StatusCodes.Status504GatewayTimeout);

        app.MapGet("/products/{id:int}", GetProduct)
            .WithTags("Products")
            .WithSummary("One product as a storefront view model, read from Catalog.Api (GET /catalog/products/{id}).")
            .Produces<ProductView>(contentType: "application/json")
            .Produces(StatusCodes.Status404NotFound)
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

    public static Task GetProduct(int id, IProductPageWriter writer, HttpContext context, CancellationToken cancellationToken) =>
        writer.WriteProductAsync(id, context, cancellationToken);

    public static Task GetProductsOverGrpc(IGrpcProductListWriter writer, IOptions<CatalogGrpcOptions> options, HttpContext context, CancellationToken cancellationToken, int? batch = null) =>
        batch is not null and not (> 0 and <= CatalogGrpcOptions.MaxBatchSize)
            ? TypedResults.ValidationProblem(new Dictionary<string, string[]> { ["batch"] = [$"Products per message: 1 to {CatalogGrpcOptions.MaxBatchSize}."] }).ExecuteAsync(context)
            : writer.WriteProductsAsync(context, batch ?? options.Value.BatchSize, cancellationToken);

    /// <summary>The least a hop can do: copy the Catalog's bytes to the caller as they arrive.</summary>
    public static async Task RelayBaseline(ICatalogApi catalog, HttpContext context, CancellationToken cancellationToken)
    {
        using var response = await catalog.GetBaselineResponseAsync(cancellationToken);
        response.EnsureSuccessStatusCode();
        context.Response.ContentType = "application/json";
        await response.Content.CopyToAsync(context.Response.Body, cancellationToken);
    }
}
