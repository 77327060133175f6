#pragma warning disable ASPIREPIPELINES001, ASPIREPIPELINES004 // Aspire 13's publishing pipeline is marked experimental.
using System.Globalization;
using System.Text;
using Aspire.Hosting.Pipelines;
using HttpPerf.AppHost.Containers;
using HttpPerf.ServiceDefaults.Contract;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;

namespace HttpPerf.AppHost.Swarm;

/// <summary>
/// <c>aspire publish -o deploy/swarm</c>: the system as a Docker swarm stack (compose format 3.9), written from the
/// AppHost's model the way Aspire.Hosting.Docker writes a Compose file (that package is not served here): the same
/// resources, replicas, endpoints, service-discovery variables, memory limits, volumes and parameters. What a swarm
/// needs beyond a Compose file, and why, is in docs/deploy.md ("On a swarm"):
/// <list type="bullet">
/// <item>every service <c>endpoint_mode: dnsrr</c>, its name answering with every replica's address, which each caller
/// expands (<c>ServiceDiscovery:ReplicaAddresses</c>): no virtual IP (the routing mesh needs IPVS);</item>
/// <item>the Gateway on every node (<c>mode: global</c>) with its port published on the node itself (<c>mode: host</c>),
/// as is the dashboard's;</item>
/// <item>a variable that carries a secret parameter (the admin key, Redis's password) is a swarm secret, a file the
/// service reads as configuration (<see cref="SystemContract.SecretsDirectory"/>), never a value in the file or in
/// <c>docker service inspect</c>; <see cref="SecretsFile"/> says what each holds, for eng/swarm/swarm.sh;</item>
/// <item>the dashboard as a service, every replica's telemetry sent to it, named by service and by node and slot.</item>
/// </list>
/// </summary>
internal static class SwarmStack
{
    public const string StepName = "publish-swarm";
    public const string StackFile = "stack.yml";
    public const string SecretsFile = "secrets.env";

    /// <summary>The dashboard's ports: its pages, and OTLP over gRPC (those of Microsoft's aspire-dashboard image).</summary>
    public const int DashboardPort = 18888;
    public const int DashboardOtlpPort = 18889;
    public const string Dashboard = "dashboard";

    /// <summary>
    /// How often each replica exports its metrics to the dashboard on a swarm: a system in service, where a chart that
    /// moves every 30 s does (the AppHost's 5 s, <see cref="ServiceResourceExtensions.MetricExportInterval"/>, is for a
    /// person watching a demo). Every 5 s, the dashboard spent 1.3% of a core at rest storing twelve replicas' metrics;
    /// every 30 s, 0.2%.
    /// </summary>
    public static readonly TimeSpan MetricExportInterval = TimeSpan.FromSeconds(30);

    /// <summary>
    /// The calls after which the runtime promotes a method to its next tier (<c>DOTNET_TC_CallCountThreshold</c>; its
    /// default is 30), for every .NET service of the stack and the dashboard. An idle replica runs a little code now and
    /// then (a lookup every 5 s, the Gateways' probes, a Redis read every 10 s, a metrics export every 30 s): with
    /// dynamic PGO each method is compiled twice more, after 30 calls and after 30 more, so at 30 the promotions came
    /// minute after minute for half an hour, and a swarm 5 to 10 minutes after nine lists sent just after it started cost
    /// 5.7 to 9.1% of a core. After 4 calls the rarest of them (the export, twice a minute) is at tier 1 within four
    /// minutes. After 2, the first minute with traffic cost half a core, spent all at once by a replica that starts under
    /// load (a lost node's, moved), and a node-loss test failed (docs/deploy.md, "The swarm at rest").
    /// </summary>
    public const string CallCountThreshold = "4";

    /// <summary>The runtime's variable for <see cref="CallCountThreshold"/>.</summary>
    public const string CallCountThresholdVariable = "DOTNET_TC_CallCountThreshold";

    /// <summary>
    /// How long a replica told to stop keeps serving (ServiceDefaults/Http/ShutdownDelay.cs): a swarm takes a stopping
    /// task out of its service's name 2 s before it signals it, and each caller looks the name up every 5 s
    /// (ServiceDefaults/Discovery/ReplicaAddresses.cs); one period and a second more.
    /// </summary>
    public static readonly TimeSpan ShutdownDelay = TimeSpan.FromSeconds(6);

    /// <summary>
    /// How long a replica told to stop may take, the delay above included, before it drops what is still in flight
    /// (the host's <c>HostOptions.ShutdownTimeout</c>, 30 s by default, set through its configuration key
    /// <c>shutdownTimeoutSeconds</c>). At 30 s, 24 s are left after the delay, and on two cores under 4 product lists a
    /// second a list's tail reached 30 to 50 s (the swarm tests' warm-up): a list sent to a stopping task then would be
    /// cut. A minute covers that tail.
    /// </summary>
    public static readonly TimeSpan ShutdownTimeout = TimeSpan.FromSeconds(60);

    /// <summary>
    /// How long a swarm waits, after the signal, before it kills the task: the host's own bound on a stop, above, and
    /// a few seconds for the process to exit. Docker's default is 10 s.
    /// </summary>
    public static readonly TimeSpan StopGracePeriod = ShutdownTimeout + TimeSpan.FromSeconds(5);

    public static void AddSwarmStack(this IDistributedApplicationBuilder builder, ContainerSettings settings) =>
        builder.Pipeline.AddStep(new PipelineStep
        {
            Name = StepName,
            Description = "Writes the system as a Docker swarm stack (docs/deploy.md).",
            Action = context => WriteAsync(context, settings, Path.GetFullPath(Path.Combine(builder.AppHostDirectory, ".."))),
            RequiredBySteps = [WellKnownPipelineSteps.Publish],
        });

    private static async Task WriteAsync(PipelineStepContext context, ContainerSettings settings, string repositoryRoot)
    {
        var output = context.Services.GetRequiredService<IPipelineOutputService>().GetOutputDirectory();
        var stack = await new StackWriter(context, settings, repositoryRoot).WriteAsync();
        Directory.CreateDirectory(output);
        await File.WriteAllTextAsync(Path.Combine(output, StackFile), stack.Yaml, context.CancellationToken);
        await File.WriteAllTextAsync(Path.Combine(output, SecretsFile), stack.Secrets, context.CancellationToken);
        context.Logger.LogInformation("Wrote the swarm stack to {Path}", Path.Combine(output, StackFile));
    }
}
