using System.Text;
using Catalog.Api.Data;
using Google.Protobuf;
using Grpc.AspNetCore.Server.Model;
using Grpc.Core;
using HttpPerf.Catalog.Grpc;
using Microsoft.Extensions.DependencyInjection.Extensions;
using Microsoft.Extensions.Options;

namespace Catalog.Api.Grpc;

/// <summary>
/// The catalog over gRPC (catalog.proto), on the HTTP/2 listener: the same rows as <c>GET /catalog/products</c>, read
/// from SQLite the same way (<see cref="ProductRows"/>). <see cref="GetProducts"/> answers one message holding every
/// product, built as objects and serialized whole, which a client must raise its 4 MB receive limit to take.
/// <see cref="StreamProducts"/> answers a stream of messages of a batch of products each, each encoded straight from
/// the rows (<see cref="EncodedProductList"/>) and written as soon as it is full, so the server holds one batch at a
/// time. Which of the two the Frontend calls is its lesson: docs/pitfalls/Frontend.Grpc.md.
/// </summary>
public sealed class CatalogGrpcService(CatalogStore store, IOptions<CatalogOptions> options)
{
    /// <summary>The most products a streamed message may ask for: 10,000 are about 2.2 MB, under the 4 MB a client takes by default.</summary>
    public const int MaxBatchSize = 10_000;

    private static readonly Google.Protobuf.Reflection.ServiceDescriptor Service = CatalogReflection.Descriptor.Services.Single();

    private static readonly Method<ProductsRequest, ProductList> GetProductsMethod =
        new(MethodType.Unary, Service.FullName, nameof(GetProducts), MessageMarshaller<ProductsRequest>(), MessageMarshaller<ProductList>());

    private static readonly Method<ProductsRequest, EncodedProductList> StreamProductsMethod =
        new(MethodType.ServerStreaming, Service.FullName, nameof(StreamProducts), MessageMarshaller<ProductsRequest>(), EncodedProductList.Marshaller);

    /// <summary>Adds the service, as <c>AddGrpc</c> and Grpc.Tools' generated binding would, with the methods below.</summary>
    public static void AddTo(IServiceCollection services)
    {
        services.AddGrpc();
        services.TryAddEnumerable(ServiceDescriptor.Singleton<IServiceMethodProvider<CatalogGrpcService>, Methods>());
    }

    public async Task<ProductList> GetProducts(ProductsRequest request, ServerCallContext context)
    {
        Validate(request);
        var list = new ProductList();
        await using var rows = new ProductRows(await store.ReadAllAsync(request.After, context.CancellationToken));
        while (await rows.ReadAsync(context.CancellationToken))
        {
            list.Products.Add(ProductOf(rows));
        }

        return list;
    }

    public async Task StreamProducts(ProductsRequest request, IServerStreamWriter<EncodedProductList> responseStream, ServerCallContext context)
    {
        Validate(request);
        var batchSize = request.BatchSize > 0 ? request.BatchSize : options.Value.GrpcBatchSize;
        using var batch = new EncodedProductList();
        await using var rows = new ProductRows(await store.ReadAllAsync(request.After, context.CancellationToken));
        while (await rows.ReadAsync(context.CancellationToken))
        {
            batch.Add(rows);
            if (batch.Count == batchSize)
            {
                // Copied into the response before WriteAsync returns: the same buffer takes the next batch.
                await responseStream.WriteAsync(batch, context.CancellationToken);
                batch.Clear();
            }
        }

        if (batch.Count > 0)
        {
            await responseStream.WriteAsync(batch, context.CancellationToken);
        }
    }

    private static void Validate(ProductsRequest request)
    {
        if (request.After < 0)
        {
            throw new RpcException(new Status(StatusCode.InvalidArgument, "after: a product id, 0 or more."));
        }

        if (request.BatchSize is < 0 or > MaxBatchSize)
        {
            throw new RpcException(new Status(StatusCode.InvalidArgument, $"batch_size: 0 (the server's default) to {MaxBatchSize} products."));
        }
    }

    private static HttpPerf.Catalog.Grpc.Product ProductOf(ProductRows rows) => new()
    {
        Id = rows.Id,
        Sku = Encoding.UTF8.GetString(rows.Sku),
        Name = Encoding.UTF8.GetString(rows.Name),
        Description = Encoding.UTF8.GetString(rows.Description),
        Brand = Encoding.UTF8.GetString(rows.Brand),
        Category = Encoding.UTF8.GetString(rows.Category),
        PriceCents = rows.PriceCents,
        Stock = rows.Stock,
    };

    /// <summary>
    /// The two methods, bound by hand: what Grpc.Tools generates for a service, written out because
    /// <see cref="StreamProducts"/>' messages are encoded by this project, not by a generated type. The service is made
    /// per call, as a generated one is.
    /// </summary>
    private sealed class Methods : IServiceMethodProvider<CatalogGrpcService>
    {
        public void OnServiceMethodDiscovery(ServiceMethodProviderContext<CatalogGrpcService> context)
        {
            context.AddUnaryMethod(GetProductsMethod, [], static (service, request, call) => service.GetProducts(request, call));
            context.AddServerStreamingMethod(StreamProductsMethod, [], static (service, request, stream, call) => service.StreamProducts(request, stream, call));
        }
    }

    /// <summary>A generated message's marshaller, as Grpc.Tools writes it: straight into gRPC's buffer, and parsed from its bytes.</summary>
    private static Marshaller<T> MessageMarshaller<T>()
        where T : IMessage<T>, IBufferMessage, new()
    {
        var parser = new MessageParser<T>(static () => new T());
        return Marshallers.Create<T>(
            static (message, context) =>
            {
                context.SetPayloadLength(message.CalculateSize());
                message.WriteTo(context.GetBufferWriter());
                context.Complete();
            },
            context => parser.ParseFrom(context.PayloadAsReadOnlySequence()));
    }
}
