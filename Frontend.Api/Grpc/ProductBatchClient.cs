using Google.Protobuf;
using Grpc.Core;
using HttpPerf.Catalog.Grpc;

namespace Frontend.Api.Grpc;

/// <summary>
/// The Catalog's <c>StreamProducts</c> as the generated client calls it, with one difference: each message is handed
/// over as its bytes (<see cref="ProductBatch"/>), not parsed into a <c>ProductList</c> of objects. The call, its
/// deadline, hedging and status are gRPC's own; only the response's marshaller is this lesson's.
/// </summary>
internal sealed class ProductBatchClient : ClientBase<ProductBatchClient>
{
    private static readonly Method<ProductsRequest, ProductBatch> StreamProductsMethod = new(
        MethodType.ServerStreaming,
        CatalogProducts.Descriptor.FullName,
        nameof(CatalogProducts.CatalogProductsClient.StreamProducts),
        Marshallers.Create(static (ProductsRequest request) => request.ToByteArray(), ProductsRequest.Parser.ParseFrom),
        Marshallers.Create<ProductBatch>(
            static (_, _) => throw new NotSupportedException("A client only reads product batches."),
            static context => ProductBatch.CopyOf(context.PayloadAsReadOnlySequence())));

    public ProductBatchClient(CallInvoker callInvoker)
        : base(callInvoker)
    {
    }

    private ProductBatchClient(ClientBaseConfiguration configuration)
        : base(configuration)
    {
    }

    public AsyncServerStreamingCall<ProductBatch> StreamProducts(ProductsRequest request, CallOptions options) =>
        CallInvoker.AsyncServerStreamingCall(StreamProductsMethod, host: null, options, request);

    protected override ProductBatchClient NewInstance(ClientBaseConfiguration configuration) => new(configuration);
}
