using Microsoft.Extensions.Options;
using Yarp.ReverseProxy.Configuration;

namespace Gateway.Edge;

/// <summary>
/// Every cluster's active health probe at <see cref="GatewayOptions.ProbeInterval"/>, where that is set, in place of
/// the interval appsettings.json gives each (5 s). Published, a Gateway runs on every node and each probes every
/// replica of every service, so the probes grow with nodes times replicas: on the swarm at rest, every 5 s they were
/// a sixth of what the whole system cost, and the stack probes every 30 s (docs/deploy.md, "The swarm at rest").
/// </summary>
internal sealed class ProbeInterval(IOptions<GatewayOptions> options) : IProxyConfigFilter
{
    public ValueTask<ClusterConfig> ConfigureClusterAsync(ClusterConfig cluster, CancellationToken cancel) =>
        ValueTask.FromResult(options.Value.ProbeInterval is { } interval && cluster.HealthCheck is { Active.Enabled: true } health
            ? cluster with { HealthCheck = health with { Active = health.Active with { Interval = interval } } }
            : cluster);

    public ValueTask<RouteConfig> ConfigureRouteAsync(RouteConfig route, ClusterConfig? cluster, CancellationToken cancel) =>
        ValueTask.FromResult(route);
}
