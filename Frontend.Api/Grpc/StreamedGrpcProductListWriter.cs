using System.Runtime.CompilerServices;
using Frontend.Api.CatalogClient;
using Grpc.Core;
using HttpPerf.Catalog.Grpc;
using HttpPerf.ServiceDefaults.Contract;
using Microsoft.Extensions.Options;

namespace Frontend.Api.Grpc;

/// <summary>
/// The fix to copy first, as grpc-dotnet's maintainers advise: a server stream of messages of many products each
/// (<c>?batch=</c>, 1,000 by default). Each message is parsed as it arrives and its products are mapped and serialized
/// with the naive rung's own lines, so memory holds one message and a few buffers, not the list, every message stays
/// under gRPC's default 4 MB limit, and the client's first bytes leave while the Catalog is still reading SQLite. Each
/// product is still an object and five strings to read, and a view and four strings more to write.
/// Its page, with the rungs measured side by side: docs/pitfalls/Frontend.Grpc.md.
/// </summary>
internal sealed class StreamedGrpcProductListWriter(
    [FromKeyedServices(CatalogGrpcClients.Stream)] CatalogProducts.CatalogProductsClient catalog, IOptions<CatalogGrpcOptions> options)
    : IGrpcProductListWriter
{
    public async Task WriteProductsAsync(HttpContext context, int batchSize, CancellationToken cancellationToken)
    {
        using var call = catalog.StreamProducts(new ProductsRequest { BatchSize = batchSize }, CatalogGrpcClients.CallOptions(options.Value, cancellationToken));
        var messages = call.ResponseStream;
        // The first message before the response starts: a call that fails is still answered with a problem.
        var more = await messages.MoveNext(cancellationToken);
        var received = new GrpcMessages(PerfMode.Streaming);
        await context.Response.WriteAsJsonAsync(Views(messages, more, received, cancellationToken), FrontendJsonContext.Default.IAsyncEnumerableProductView, contentType: null, cancellationToken);
        received.Complete();
    }

    private static async IAsyncEnumerable<ProductView> Views(
        IAsyncStreamReader<ProductList> messages, bool more, GrpcMessages received, [EnumeratorCancellation] CancellationToken cancellationToken)
    {
        for (; more; more = await messages.MoveNext(cancellationToken))
        {
            received.Received(messages.Current.CalculateSize());
            foreach (var product in messages.Current.Products)
            {
                yield return ProductMessages.ViewOf(product);
            }
        }
    }
}
