using Catalog.Api.Data;
using Catalog.Api.Grpc;
using Catalog.Api.WriteStrategy;
using Catalog.Api.Serialization;
using System.Text.Json;
using Microsoft.Extensions.Options;

namespace Catalog.Api;

public static class CatalogApi
{
    public static IEndpointRouteBuilder MapCatalogApi(this IEndpointRouteBuilder app)
    {
        var api = app.MapGroup("/catalog").WithTags("Catalog");

        api.MapGet("/products", GetAllProducts)
            .WithSummary("Every product as one JSON array (about 25 MB at the default size); with ?after={id}, those after that id: a resumable read.")
            .Produces<IEnumerable<Product>>(contentType: "application/json")
            .ProducesValidationProblem();

        api.MapGet("/products/{id:int}", GetProduct)
            .WithSummary("One product by id, after Catalog:ProductLatency (a store's round trip): the page Frontend.Blocking fetches.")
            .Produces<Product>(contentType: "application/json")
            .Produces(StatusCodes.Status404NotFound);

        api.MapGet("/export", GetExport)
            .WithSummary("Every product as CSV, one short row each (about 6 MB at the default size).")
            .Produces(StatusCodes.Status200OK, contentType: "text/csv");

        if (app.ServiceProvider.GetRequiredService<IOptions<CatalogOptions>>().Value.EnableBaseline)
        {
            api.MapGet("/products/baseline", GetBaseline)
                .WithSummary("The same bytes as /catalog/products, serialized once and served from memory: the benchmark's limit.");
        }

        // gRPC needs HTTP/2: these answer on the service's h2 listener (catalog.proto).
        app.MapGrpcService<CatalogGrpcService>();
        app.MapGrpcHealthChecksService();
        return app;
    }

    public static Task GetExport(ICatalogExportWriter writer, HttpContext context, CancellationToken cancellationToken) =>
        writer.WriteExportAsync(context, cancellationToken);

    /// <summary>
    /// Every product in id order, or those after <paramref name="after"/>: a client whose read stopped mid-body (its
    /// replica froze) asks another replica for the rest after the last product it has whole (docs/pitfalls/Frontend.Replicas.md).
    /// </summary>
    public static Task GetAllProducts(ICatalogWriter writer, HttpContext context, CancellationToken cancellationToken, int after = 0) =>
        after < 0
            ? TypedResults.ValidationProblem(new Dictionary<string, string[]> { ["after"] = ["A product id: 0 or more."] }).ExecuteAsync(context)
            : writer.WriteAllProductsAsync(context, after, cancellationToken);

    /// <summary>
    /// One product: its headers at once, its body after Catalog:ProductLatency, as a service that starts its answer and
    /// then waits on a remote store sends it (docs/pitfalls/Frontend.Blocking.md). A caller's wait is in reading the body.
    /// </summary>
    public static async Task GetProduct(int id, CatalogStore store, IOptions<CatalogOptions> options, HttpContext context, CancellationToken cancellationToken)
    {
        Product? found = null;
        await foreach (var product in store.StreamAllAsync(id - 1, cancellationToken))
        {
            found = product.Id == id ? product : null;
            break;
        }

        if (found is null)
        {
            await TypedResults.NotFound().ExecuteAsync(context);
            return;
        }

        context.Response.ContentType = "application/json; charset=utf-8";
        await context.Response.StartAsync(cancellationToken);
        await Task.Delay(options.Value.ProductLatency, cancellationToken);
        await JsonSerializer.SerializeAsync(context.Response.Body, found, CatalogJsonContext.Default.Product, cancellationToken);
    }

    // A stream, not Results.Bytes: one 25 MB write is copied whole into Kestrel's output pipe per request,
    // while a stream is copied 64 KB at a time, each write waiting for the socket.
    public static async Task<IResult> GetBaseline(CatalogBaseline baseline, CancellationToken cancellationToken) =>
        Results.Stream(new MemoryStream(await baseline.GetBytesAsync(cancellationToken), writable: false), "application/json");
}
