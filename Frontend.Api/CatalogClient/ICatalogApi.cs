using Refit;

namespace Frontend.Api.CatalogClient;

/// <summary>Catalog.Api through Refit. Both variants take the raw response and decide how to read its body.</summary>
public interface ICatalogApi
{
    /// <summary>The raw response: the caller decides how to read the body.</summary>
    [Get("/catalog/products")]
    Task<HttpResponseMessage> GetProductsResponseAsync(CancellationToken cancellationToken);

    /// <summary>
    /// The products after <paramref name="after"/>, in id order: the rest of a read whose replica went silent or died
    /// mid-body, asked of another (<paramref name="silentReplica"/>, host:port, goes in the request's options:
    /// Frontend.Replicas' routing leaves it out). Its page: docs/pitfalls/Frontend.Replicas.md.
    /// </summary>
    [Get("/catalog/products")]
    Task<HttpResponseMessage> GetProductsAfterResponseAsync([Query] int after, [Property(SilentReplicaKey)] string silentReplica, CancellationToken cancellationToken);

    /// <summary>The request option naming the replica a resumed read must not go back to.</summary>
    public const string SilentReplicaKey = "catalog.replicas.silent";

    /// <summary>The catalog's bytes from memory (benchmark only), read as a stream and relayed untouched.</summary>
    [Get("/catalog/products/baseline")]
    Task<HttpResponseMessage> GetBaselineResponseAsync(CancellationToken cancellationToken);
}
