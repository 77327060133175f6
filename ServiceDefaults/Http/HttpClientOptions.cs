using HttpPerf.ServiceDefaults.Contract;

namespace HttpPerf.ServiceDefaults.Http;

/// <summary>The HttpClients every service makes to its dependencies (configuration section <c>HttpClients</c>).</summary>
public sealed class HttpClientOptions
{
    public const string Section = SystemContract.HttpClientsSection;

    /// <summary>
    /// How long a pooled connection to a dependency lives (default 10 s). Where one address stands for several replicas
    /// (a Compose service name, a Kubernetes Service), a connection stays on the replica it reached first, for good by
    /// default; retiring it spreads the load again, a replica that starts later included. docs/deploy.md has the spread
    /// measured with and without it. <c>-00:00:00.001</c> (<see cref="Timeout.InfiniteTimeSpan"/>) keeps them for good.
    /// </summary>
    public TimeSpan PooledConnectionLifetime { get; set; } = TimeSpan.FromSeconds(10);
}
