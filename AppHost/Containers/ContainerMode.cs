using System.Net.NetworkInformation;
using System.Net.Sockets;
using System.Net;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.ServiceDefaults;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;

namespace HttpPerf.AppHost.Containers;

/// <summary>
/// Container mode (<c>dotnet run -c Release --project AppHost -- --containers</c>, docs/deploy.md): the system as a
/// deployment runs it, every service from its image on Docker or Podman, on a network of its own.
/// </summary>
internal static class ContainerMode
{
    /// <summary>
    /// Reads the switch and, when it is on, prepares the AppHost for containers: the images are built (when missing
    /// or stale) and the volumes given to the image's user before anything starts, and the containers can reach the
    /// dashboard's OTLP endpoint on this machine.
    /// </summary>
    public static ContainerSettings AddContainerMode(this IDistributedApplicationBuilder builder)
    {
        var settings = ContainerSettings.Read(builder.Configuration);
        if (!settings.Enabled || !builder.ExecutionContext.IsRunMode)
        {
            return settings with { Enabled = false };
        }

        // Aspire's container tunnel carries containers' calls to the host (the dashboard's OTLP endpoint) through a
        // proxy container. Where it is off (ASPIRE_ENABLE_CONTAINER_TUNNEL=false: eng/containers/setup.sh turns it off,
        // since its image cannot be pulled there), containers call the host at the engine's name for it
        // (host.containers.internal on Podman, a bridge gateway address), so the dashboard must listen beyond loopback;
        // it still asks every caller for its OTLP API key.
        if (!builder.Configuration.GetValue("ASPIRE_ENABLE_CONTAINER_TUNNEL", true))
        {
            var hostName = builder.Configuration["AppHost:ContainerHostname"] ??= settings.Runtime == "podman" ? "host.containers.internal" : "host.docker.internal";
            foreach (var key in new[] { "ASPIRE_DASHBOARD_OTLP_ENDPOINT_URL", "ASPIRE_DASHBOARD_OTLP_HTTP_ENDPOINT_URL" })
            {
                if (builder.Configuration[key] is { } url && Uri.TryCreate(url, UriKind.Absolute, out var otlp) && otlp.IsLoopback)
                {
                    builder.Configuration[key] = new UriBuilder(otlp) { Host = "0.0.0.0" }.Uri.ToString().TrimEnd('/');
                }
            }

            // DCP, which listens for the dashboard, binds the machine's addresses as they are when it starts, before the
            // containers' bridge exists; so the name points at the machine's own address rather than at the bridge.
            if (HostAddress() is { } address)
            {
                settings = settings with { RuntimeArgs = [$"--add-host={hostName}:{address}"] };
            }
        }

        // A container that dies shows on its row, even when the engine restarts it at once (ContainerExits).
        var running = settings;
        builder.Services.AddHostedService(services => ActivatorUtilities.CreateInstance<ContainerExits>(services, running));

        builder.Eventing.Subscribe<BeforeStartEvent>(async (start, cancellationToken) =>
        {
            var images = start.Model.Resources
                .SelectMany(resource => resource.Annotations.OfType<ServiceImageAnnotation>())
                .Select(annotation => annotation.Image)
                .Distinct();
            var logger = start.Services.GetRequiredService<ILoggerFactory>().CreateLogger(typeof(ContainerMode));
            var serviceImages = new ServiceImages(settings, RepositoryRoot(builder), logger);
            await serviceImages.EnsureAsync(images, cancellationToken);
            var volumes = start.Model.Resources
                .SelectMany(resource => resource.Annotations.OfType<AppOwnedVolumeAnnotation>()
                    .Select(volume => (Volume: volume, resource.Annotations.OfType<ServiceImageAnnotation>().Single().Image)))
                .DistinctBy(mount => mount.Volume);
            await serviceImages.GiveToAppAsync(volumes, cancellationToken);
        });
        return settings;
    }

    /// <summary>
    /// The service: in process mode <paramref name="processReplicas"/> projects; published, its project; in container
    /// mode, <paramref name="replicas"/> containers of its image (<c>httpperf/{name}</c>); each instance reached
    /// straight at its own port (no proxy in between).
    /// </summary>
    public static Service AddService<TProject>(this IDistributedApplicationBuilder builder, string name, ContainerSettings containers, int replicas = 1, int processReplicas = 1)
        where TProject : IProjectMetadata, new()
    {
        if (!containers.Enabled)
        {
            var count = builder.ExecutionContext.IsRunMode ? processReplicas : 1;
            return Service.FromProjects(name, count, instance => builder.AddProject<TProject>(instance)).WithTelemetryExport();
        }

        var image = new ServiceImage(
            Path.GetDirectoryName(new TProject().ProjectPath)!,
            containers.Runtime == "podman" ? "localhost" : null,
            SystemContract.Image(name),
            "dev");
        // LoadGen serves no API of its own, only its control endpoint (ServiceResourceExtensions.WithControlEndpoint).
        var service = Service.FromImage(builder, name, image, replicas, containers.ServiceArgs(name), httpEndpoint: name != SystemContract.LoadGen).WithTelemetryExport();
        foreach (var (variable, value) in containers.Environment)
        {
            service.WithEnvironment(variable, value);
        }

        return service;
    }

    /// <summary>
    /// Redis, in container mode: the image configured (<c>Containers:RedisImage</c>), else Aspire's; plain TCP, since
    /// the services in their containers trust no development certificate.
    /// </summary>
    public static IResourceBuilder<RedisResource> InContainerMode(this IResourceBuilder<RedisResource> redis, ContainerSettings containers)
    {
        if (!containers.Enabled)
        {
            return redis;
        }

        if (containers.RedisImage is { } reference)
        {
            var (registry, image, tag) = ParseImage(reference);
            redis.WithImageRegistry(registry).WithImage(image, tag);
        }

        // Under a limit of its own, as every container (ContainerSettings.Limits).
        redis.WithContainerRuntimeArgs(containers.ServiceArgs(SystemContract.FlagsConnectionName));
#pragma warning disable ASPIRECERTIFICATES001 // Experimental: the way 13.6 offers to keep Redis on plain TCP.
        return redis.WithoutHttpsCertificate();
#pragma warning restore ASPIRECERTIFICATES001
    }

    // registry/repository:tag, where a first segment with a dot or a port, or "localhost", is a registry.
    private static (string? Registry, string Image, string Tag) ParseImage(string reference)
    {
        var slash = reference.LastIndexOf('/');
        var colon = reference.LastIndexOf(':');
        var (name, tag) = colon > slash ? (reference[..colon], reference[(colon + 1)..]) : (reference, "latest");
        var first = name.Split('/')[0];
        return name.Contains('/') && (first == "localhost" || first.Contains('.') || first.Contains(':'))
            ? (first, name[(first.Length + 1)..], tag)
            : (null, name, tag);
    }

    // The first IPv4 address of an interface that is up and is neither loopback nor a container engine's bridge.
    private static IPAddress? HostAddress() => NetworkInterface.GetAllNetworkInterfaces()
        .Where(nic => nic.OperationalStatus == OperationalStatus.Up && nic.NetworkInterfaceType != NetworkInterfaceType.Loopback)
        .Where(nic => !new[] { "podman", "cni", "docker", "br-", "veth", "virbr" }.Any(nic.Name.StartsWith))
        .SelectMany(nic => nic.GetIPProperties().UnicastAddresses)
        .Select(unicast => unicast.Address)
        .FirstOrDefault(address => address.AddressFamily == AddressFamily.InterNetwork);

    private static string RepositoryRoot(IDistributedApplicationBuilder builder) =>
        Path.GetFullPath(Path.Combine(builder.AppHostDirectory, ".."));
}
