using HttpPerf.ServiceDefaults.Contract;

namespace Frontend.Api;

public sealed class FrontendOptions
{
    public const string Section = SystemContract.FrontendSection;

    /// <summary>Adds <c>GET /products/baseline</c>, Catalog.Api's in-memory bytes relayed untouched: the benchmark's limit for this hop; off by default.</summary>
    public bool EnableBaseline { get; set; }
}
