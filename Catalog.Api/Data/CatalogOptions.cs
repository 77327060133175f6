using HttpPerf.ServiceDefaults.Contract;

namespace Catalog.Api.Data;

public sealed class CatalogOptions
{
    public const string Section = SystemContract.CatalogSection;

    /// <summary>Products in the store. The default gives a JSON array of about 25 MB.</summary>
    public int ProductCount { get; set; } = 86_000;

    /// <summary>Where the SQLite file lives, relative to the content root unless absolute.</summary>
    public string DataDirectory { get; set; } = "App_Data";

    /// <summary>Products per message of the gRPC stream when the caller asks for none (docs/pitfalls/Frontend.Grpc.md).</summary>
    public int GrpcBatchSize { get; set; } = 1_000;

    /// <summary>
    /// How long <c>GET /catalog/products/{id}</c> waits between its headers and its body: the round trip to a store across
    /// a network that loopback and an embedded SQLite file do not have, so a caller blocked on it waits as on a real call
    /// (docs/pitfalls/Frontend.Blocking.md). Zero answers at once.
    /// </summary>
    public TimeSpan ProductLatency { get; set; } = TimeSpan.FromMilliseconds(20);

    /// <summary>Adds <c>GET /catalog/products/baseline</c>, the benchmark's limit; off by default.</summary>
    public bool EnableBaseline { get; set; }
}
