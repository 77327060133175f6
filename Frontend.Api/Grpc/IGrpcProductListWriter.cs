using HttpPerf.ServiceDefaults.Contract;

namespace Frontend.Api.Grpc;

/// <summary>
/// Pitfall <c>Frontend.Grpc</c>: the product list fetched from Catalog.Api over gRPC (catalog.proto) instead of JSON.
/// Every rung writes the same view models, byte for byte, as <c>GET /products</c>; they differ in how many messages the
/// list comes in, and in what is made per product. Its page, with the rungs measured side by side against the JSON
/// path: docs/pitfalls/Frontend.Grpc.md.
/// </summary>
public interface IGrpcProductListWriter
{
    public const string Flag = Pitfalls.FrontendGrpc;

    /// <param name="batchSize">Products per streamed message, asked of the Catalog (the streaming rungs only).</param>
    Task WriteProductsAsync(HttpContext context, int batchSize, CancellationToken cancellationToken);
}
