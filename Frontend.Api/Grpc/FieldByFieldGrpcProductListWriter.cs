using Frontend.Api.CatalogClient;
using HttpPerf.Catalog.Grpc;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.ServiceDefaults.Http;
using Microsoft.Extensions.Options;

namespace Frontend.Api.Grpc;

/// <summary>
/// The limit: the same stream, but each message is taken as its bytes (<see cref="ProductBatchClient"/>), read product
/// by product where it lies (<see cref="ProductBatchReader"/>), and each view is written field by field into the
/// response (<see cref="ProductViewWriter"/>, the JSON path's own) in 230 KB writes (LargeWrites): no object or string
/// per product at either end of this hop, and the protobuf's text is already the UTF-8 the JSON needs.
/// Its page, with the rungs measured side by side: docs/pitfalls/Frontend.Grpc.md.
/// </summary>
internal sealed class FieldByFieldGrpcProductListWriter([FromKeyedServices(CatalogGrpcClients.Batches)] ProductBatchClient catalog, IOptions<CatalogGrpcOptions> options) : IGrpcProductListWriter
{
    public async Task WriteProductsAsync(HttpContext context, int batchSize, CancellationToken cancellationToken)
    {
        using var call = catalog.StreamProducts(new ProductsRequest { BatchSize = batchSize }, CatalogGrpcClients.CallOptions(options.Value, cancellationToken));
        var messages = call.ResponseStream;
        // The first message before the response starts: a call that fails is still answered with a problem.
        var more = await messages.MoveNext(cancellationToken);
        using var writer = LargeWrites.RentJsonWriter(context.Response);
        var json = writer.Json;
        var views = new ProductViewWriter(json);
        var received = new GrpcMessages(PerfMode.Optimized);
        json.WriteStartArray();
        for (; more; more = await messages.MoveNext(cancellationToken))
        {
            using var batch = messages.Current;
            received.Received(batch.Length);
            var products = new ProductBatchReader(batch);
            while (products.Read())
            {
                views.Write(products);
                await LargeWrites.FlushIfFullAsync(json, cancellationToken);
            }
        }

        json.WriteEndArray();
        await json.FlushAsync(cancellationToken);
        received.Complete();
    }
}
