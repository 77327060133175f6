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

    /// <summary>
    /// How long opening a connection to a dependency may take (default 2 s; the handler's own waits without bound).
    /// Where a replica is gone from an overlay network (a swarm's task stopped, its node lost), its address drops a
    /// connection attempt without a word instead of refusing it: each call sent there waited out the Gateway's 15 s
    /// timeout. Failing at 2 s hands the call to the next replica (the retry, the Gateway's hedge). A connection on a
    /// network takes well under a millisecond; a lost SYN is sent again after 1 s.
    /// </summary>
    public TimeSpan ConnectTimeout { get; set; } = TimeSpan.FromSeconds(2);

    /// <summary>Sets these on a client's handler: every HttpClient's (ServiceDefaults) and YARP's (the Gateway).</summary>
    public void Configure(SocketsHttpHandler handler)
    {
        handler.PooledConnectionLifetime = PooledConnectionLifetime;
        handler.ConnectTimeout = ConnectTimeout;
    }
}
