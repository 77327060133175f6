using System.Text.Json.Serialization;
using Frontend.Api.CatalogClient;

namespace Frontend.Api.Blocking;

/// <summary>
/// What both rungs of Frontend.Blocking share: the Catalog client they call through (the pipeline every client gets,
/// service discovery's <c>http://catalog</c>), the Catalog's path for one product, and the page written from its answer,
/// so the two differ only in how they wait. Its page: docs/pitfalls/Frontend.Blocking.md.
/// </summary>
public static class ProductPage
{
    public const string Client = "catalog-product";

    public static string CatalogPath(int id) => $"/catalog/products/{id}";

    public static IHttpClientBuilder AddClient(IServiceCollection services) =>
        services.AddHttpClient(Client, client => client.BaseAddress = new Uri("http://catalog"));

    /// <summary>The product's view, or a 404 when the Catalog has no such product (<paramref name="product"/> null).</summary>
    public static Task WriteAsync(CatalogProduct? product, HttpContext context, CancellationToken cancellationToken) =>
        product is null
            ? TypedResults.NotFound().ExecuteAsync(context)
            : context.Response.WriteAsJsonAsync(ProductView.From(product), ProductPageJsonContext.Default.ProductView, contentType: null, cancellationToken);
}

[JsonSourceGenerationOptions(System.Text.Json.JsonSerializerDefaults.Web)]
[JsonSerializable(typeof(CatalogProduct))]
[JsonSerializable(typeof(ProductView))]
public sealed partial class ProductPageJsonContext : JsonSerializerContext;
