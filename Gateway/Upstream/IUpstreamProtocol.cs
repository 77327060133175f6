using HttpPerf.ServiceDefaults.Contract;

namespace Gateway.Upstream;

/// <summary>
/// Pitfall <c>Gateway.Upstream</c>: which HTTP version the Gateway relays a request over to a service. It runs in
/// YARP's pipeline before a destination is chosen, and may move the request to the route's HTTP/2 twin cluster
/// (<c>catalog-h2</c>: the same replicas at their cleartext HTTP/2 listener, appsettings.json). Both rungs pass the
/// same bytes; they differ in when a service's early answer reaches the client, and in what a large body costs.
/// Its page, with the protocols measured side by side: docs/pitfalls/Gateway.Upstream.md.
/// </summary>
public interface IUpstreamProtocol
{
    public const string Flag = Pitfalls.GatewayUpstream;

    /// <summary>The suffix of a cluster's HTTP/2 twin in the Gateway's configuration.</summary>
    public const string Http2Cluster = "-h2";

    Task InvokeAsync(HttpContext context, Func<Task> next);
}
