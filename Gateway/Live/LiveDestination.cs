using Yarp.ReverseProxy;
using Yarp.ReverseProxy.Health;
using Yarp.ReverseProxy.Model;

namespace Gateway.Live;

/// <summary>
/// A replica as the Gateway sees it: its cluster, its address, and whether the Gateway sends it requests. YARP keeps
/// two verdicts, its active probe's (<c>/health</c> every 2 s) and its passive one's (failed requests, forgotten after
/// the reactivation period); a replica either calls unhealthy is out of the rotation (appsettings.json's
/// <c>HealthCheck</c>, docs/pitfalls/Frontend.Replicas.md).
/// </summary>
public sealed record LiveDestination(string Cluster, string Address, string Active, string Passive)
{
    /// <summary>Whether the Gateway routes to it: neither verdict is unhealthy.</summary>
    public bool Available => Active != nameof(DestinationHealth.Unhealthy) && Passive != nameof(DestinationHealth.Unhealthy);

    /// <summary>Every destination of every cluster, in the order of their names.</summary>
    public static IReadOnlyList<LiveDestination> From(IProxyStateLookup proxy) =>
        [.. proxy.GetClusters()
            .OrderBy(c => c.ClusterId, StringComparer.Ordinal)
            .SelectMany(c => c.Destinations.Values
                .OrderBy(d => d.DestinationId, StringComparer.Ordinal)
                .Select(d => From(c, d)))];

    private static LiveDestination From(ClusterState cluster, DestinationState destination) =>
        new(cluster.ClusterId, destination.Model.Config.Address, destination.Health.Active.ToString(), destination.Health.Passive.ToString());
}
