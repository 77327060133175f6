using Bench.Containers;
using Microsoft.Extensions.Configuration;

namespace HttpPerf.AppHost.Containers;

/// <summary>
/// Container mode's settings (docs/deploy.md), read once from the AppHost's configuration. None is needed where
/// Docker or Podman reach Microsoft's and Docker's registries; on a machine that cannot, eng/containers/setup.sh
/// builds local equivalents and stores their names in the AppHost's user secrets.
/// </summary>
/// <param name="Enabled">Run every service from its image: <c>dotnet run -c Release --project AppHost -- --containers</c> (or <c>AppHost:Containers=true</c>).</param>
/// <param name="Runtime">The engine: <c>ASPIRE_CONTAINER_RUNTIME</c>, Aspire's own setting (docker, the default, or podman).</param>
/// <param name="BaseImage"><c>Containers:BaseImage</c>: the services' base image, instead of the SDK's default (mcr.microsoft.com/dotnet/aspnet).</param>
/// <param name="RedisImage"><c>Containers:RedisImage</c>: Redis's image as <c>registry/repository:tag</c>, instead of Aspire's default (docker.io's redis).</param>
/// <param name="Replicas">Containers of Catalog.Api, Frontend.Api and Uploads.Api each: the <c>replicas</c> parameter, as when published (default 2).</param>
/// <param name="UploadsVolume"><c>Containers:UploadsVolume</c>: the named volume every Uploads.Api replica stores in (default <c>httpperf-uploads</c>).</param>
/// <param name="Limits"><c>Containers:Limits:{service}</c>: each service's memory (and, if set, CPU) limit, per replica (appsettings.json, docs/memory.md).</param>
/// <param name="Environment"><c>Containers:Environment:{name}</c>: variables for every service's containers on top of their images' own, as a
/// deployment's manifest adds them (<c>bench --memory --gc</c> sets the GC's this way: <c>DOTNET_gcServer=0</c>).</param>
internal sealed record ContainerSettings(bool Enabled, string Runtime, string? BaseImage, string? RedisImage, int Replicas, string UploadsVolume,
    IReadOnlyDictionary<string, ContainerLimits> Limits, IReadOnlyDictionary<string, string> Environment)
{
    /// <summary>Arguments of the engine's <c>run</c> for every service's container (ContainerMode: how they reach the dashboard).</summary>
    public string[] RuntimeArgs { get; init; } = [];

    public const string Switch = "--containers";

    /// <summary>
    /// <see cref="Runtime"/>'s command line, for what the AppHost asks of the engine itself (its image builds, the volumes,
    /// the containers' exits, the fault commands). No time limit on a command: the AppHost's stop cancels a pending one.
    /// </summary>
    public ContainerEngine Engine => new(Runtime, Timeout.InfiniteTimeSpan);

    /// <summary>
    /// The AppHost's arguments with <see cref="Switch"/> as the setting it stands for. The command line's configuration
    /// reads <c>--key value</c>: left as it is, a bare switch takes the next argument as its value, so
    /// <c>--containers --Parameters:replicas=1</c> set <c>containers</c> and left the replicas at 2.
    /// </summary>
    public static string[] AsConfiguration(string[] args) =>
        [.. args.Select(arg => arg == Switch ? "--AppHost:Containers=true" : arg)];

    public static ContainerSettings Read(IConfiguration configuration) => new(
        Enabled: configuration.GetValue("AppHost:Containers", false),
        Runtime: configuration["ASPIRE_CONTAINER_RUNTIME"] ?? "docker",
        BaseImage: configuration["Containers:BaseImage"],
        RedisImage: configuration["Containers:RedisImage"],
        Replicas: configuration.GetValue("Parameters:replicas", 2),
        UploadsVolume: configuration["Containers:UploadsVolume"] ?? "httpperf-uploads",
        Limits: configuration.GetSection("Containers:Limits").GetChildren()
            .ToDictionary(service => service.Key, service => service.Get<ContainerLimits>() ?? new ContainerLimits(), StringComparer.OrdinalIgnoreCase),
        Environment: configuration.GetSection("Containers:Environment").GetChildren().ToDictionary(variable => variable.Key, variable => variable.Value ?? ""));

    /// <summary>The engine's arguments for one replica of <paramref name="service"/>: its limits, and a restart when it dies.</summary>
    public string[] ServiceArgs(string service) =>
        [.. RuntimeArgs, .. Limits.GetValueOrDefault(service, new ContainerLimits()).RuntimeArgs];
}

/// <summary>
/// What a deployment declares for one replica of a service (Kubernetes <c>resources.limits</c>, Compose
/// <c>deploy.resources.limits</c>), given to the engine as <c>--memory</c> (with <c>--memory-swap</c> the same: no
/// swap to hide in) and <c>--cpus</c>. A replica the kernel kills for passing its memory limit (exit 137) is started
/// again by the engine (<c>--restart=on-failure</c>), as a pod's container is; a stop from the dashboard is not undone.
/// </summary>
/// <param name="MemoryMiB">Memory per replica in MiB (<c>256Mi</c> in Kubernetes, <c>256M</c> in Compose); 0 for none.</param>
/// <param name="Cpus">CPUs per replica (<c>--cpus</c>, a CFS quota); 0 for none.</param>
internal sealed record ContainerLimits(int MemoryMiB = 0, double Cpus = 0)
{
    public string[] RuntimeArgs =>
    [
        "--restart=on-failure",
        .. MemoryMiB > 0 ? (string[])[$"--memory={MemoryMiB}m", $"--memory-swap={MemoryMiB}m"] : [],
        .. Cpus > 0 ? (string[])[string.Create(System.Globalization.CultureInfo.InvariantCulture, $"--cpus={Cpus}")] : [],
    ];
}
