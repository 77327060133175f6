using Catalog.Api.Data;
using Catalog.Api.Grpc;
using Catalog.Api.WriteStrategy;
using Catalog.Api.Serialization;
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

    // A stream, not Results.Bytes: one 25 MB write is copied whole into Kestrel's output pipe per request,
    // while a stream is copied 64 KB at a time, each write waiting for the socket.
    public static async Task<IResult> GetBaseline(CatalogBaseline baseline, CancellationToken cancellationToken) =>
        Results.Stream(new MemoryStream(await baseline.GetBytesAsync(cancellationToken), writable: false), "application/json");
}
