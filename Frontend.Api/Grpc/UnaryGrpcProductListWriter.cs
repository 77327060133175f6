using Frontend.Api.CatalogClient;
using Grpc.Core;
using HttpPerf.Catalog.Grpc;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.ServiceDefaults.Selection;
using Microsoft.Extensions.Options;

namespace Frontend.Api.Grpc;

/// <summary>
/// What teams do after their first <c>ResourceExhausted</c>: keep the unary call, raise the client's 4 MB receive limit
/// until the list fits (<see cref="CatalogGrpcOptions.UnaryMaxReceiveMessageSize"/>). The Catalog builds every product
/// as an object, then serializes the whole message; this hop receives all of it into one array the size of the message,
/// parses every object out of it, maps the list, then serializes it. Nothing is sent until all of that exists.
/// Its page, with the rungs measured side by side: docs/pitfalls/Frontend.Grpc.md.
/// </summary>
internal sealed class UnaryGrpcProductListWriter(
    [FromKeyedServices(CatalogGrpcClients.Unary)] CatalogProducts.CatalogProductsClient catalog, IOptions<CatalogGrpcOptions> options, RequestVariants variants)
    : IGrpcProductListWriter
{
    public async Task WriteProductsAsync(HttpContext context, int batchSize, CancellationToken cancellationToken)
    {
        ProductList list = await catalog.GetProductsAsync(new ProductsRequest(), CatalogGrpcClients.CallOptions(options.Value, cancellationToken));
        var size = list.CalculateSize();
        variants.Buffered(inMemory: size); // the message, held whole before a product of it is parsed
        var messages = new GrpcMessages(PerfMode.Naive);
        messages.Received(size);
        messages.Complete();
        List<ProductView> views = list.Products.Select(ProductMessages.ViewOf).ToList();
        await context.Response.WriteAsJsonAsync(views, FrontendJsonContext.Default.ListProductView, contentType: null, cancellationToken);
    }
}
