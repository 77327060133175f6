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
internal sealed record ContainerSettings(bool Enabled, string Runtime, string? BaseImage, string? RedisImage, int Replicas, string UploadsVolume)
{
    /// <summary>Arguments of the engine's <c>run</c> for every service's container (ContainerMode: how they reach the dashboard).</summary>
    public string[] RuntimeArgs { get; init; } = [];

    public const string Switch = "--containers";

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
        UploadsVolume: configuration["Containers:UploadsVolume"] ?? "httpperf-uploads");
}
