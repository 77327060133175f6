using Microsoft.Extensions.Configuration;
using HttpPerf.ServiceDefaults;

/// <summary>How the AppHost wires each service in run mode: where it reads its flags, and how it is reached.</summary>
internal static class ServiceResourceExtensions
{
    /// <summary>
    /// Where a service reads its pitfall flags: run here, the shared flags file (<c>FeatureFlags__File</c>);
    /// published, the Redis resource (<c>ConnectionStrings__flags</c>), once it answers.
    /// </summary>
    public static IResourceBuilder<ProjectResource> WithPerfFlags(
        this IResourceBuilder<ProjectResource> service, string flagsFile, IResourceBuilder<RedisResource>? flagsStore) =>
        flagsStore is null
            ? service.WithEnvironment(SystemContract.FlagsFile, flagsFile)
            : service.WithReference(flagsStore).WaitFor(flagsStore);

    /// <summary>
    /// Callers reach the service's own Kestrel, not a DCP proxy in front of it. By default Aspire puts a proxy on
    /// every endpoint, so that replicas of one service share one address and a restarted process keeps its port.
    /// It costs: the 25.8 MB catalog took p50 162 ms through the proxy against 101 ms direct, DCP spent about
    /// 44 ms of CPU per catalog it relayed, and a product list crosses three hops (docs/dashboard.md). Run mode here
    /// has one process per service, so the proxy buys nothing; with replicas (<c>WithReplicas</c>) it is what
    /// spreads requests, so a replicated service keeps it. The port stays the launch profile's
    /// (http://localhost:5100 for the Gateway), or a free one when Aspire is asked for random ports
    /// (<c>aspire start --isolated</c> and the AppHost tests), so two instances never collide.
    /// </summary>
    public static IResourceBuilder<ProjectResource> WithDirectEndpoint(this IResourceBuilder<ProjectResource> service)
    {
        if (!service.ApplicationBuilder.ExecutionContext.IsRunMode || service.Resource.TryGetLastAnnotation<ReplicaAnnotation>(out var replicas) && replicas.Replicas > 1)
        {
            return service;
        }

        var randomPorts = service.ApplicationBuilder.Configuration.GetValue("DcpPublisher:RandomizePorts", false);
        return service.WithEndpoint("http", endpoint =>
        {
            endpoint.IsProxied = false;
            if (randomPorts)
            {
                endpoint.Port = null;
                endpoint.TargetPort = null;
            }
        }, createIfNotExists: false);
    }
}
