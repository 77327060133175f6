using HttpPerf.AppHost.Containers;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.ServiceDefaults;
using Microsoft.Extensions.Configuration;

/// <summary>How the AppHost wires each service: where it reads its flags, how it is reached, what it stores where.</summary>
internal static class ServiceResourceExtensions
{
    /// <summary>
    /// Where a service reads its pitfall flags: in process mode, the shared flags file (<c>FeatureFlags__File</c>);
    /// in container mode and published, the Redis resource (<c>ConnectionStrings__flags</c>), once it answers.
    /// </summary>
    public static Service WithPerfFlags(this Service service, string flagsFile, IResourceBuilder<RedisResource>? flagsStore) =>
        flagsStore is null
            ? service.WithEnvironment(SystemContract.FlagsFile, flagsFile)
            : service.Each(p => p.WithReference(flagsStore).WaitFor(flagsStore), c => c.WithReference(flagsStore).WaitFor(flagsStore));

    /// <summary>
    /// How each service exports its telemetry to the dashboard, beside what Aspire sets:
    /// <list type="bullet">
    /// <item>Metrics every <see cref="MetricExportInterval"/>, not every second. Aspire sets 1 s for every resource of a
    /// Development AppHost (<c>OTEL_METRIC_EXPORT_INTERVAL</c>, with traces and logs batched each second), so the
    /// dashboard's charts move at once; each export collects every instrument (the runtime's, Kestrel's, HttpClient's,
    /// the lessons' histograms of 30 buckets) and sends them to the dashboard, which stores them. At rest that was most
    /// of what the system spent (docs/cost.md). Traces and logs keep Aspire's second: they cost nothing when nothing
    /// happens.</item>
    /// <item>An export given up after <see cref="ExportTimeout"/>, not the exporter's default 10 s
    /// (<c>OTEL_EXPORTER_OTLP_TIMEOUT</c>). The dashboard stops first when the AppHost does, and each service's last
    /// export at its shutdown then retried (Aspire's <c>OTEL_DOTNET_EXPERIMENTAL_OTLP_RETRY=in_memory</c>) until the
    /// timeout: every stop of the system took 10 s more. An export to the local dashboard takes milliseconds.</item>
    /// </list>
    /// Runs after Aspire's own callback, so these values win.
    /// </summary>
    public static Service WithTelemetryExport(this Service service)
    {
        if (!service.ApplicationBuilder.ExecutionContext.IsRunMode)
        {
            return service;
        }

        return service
            .WithEnvironment("OTEL_METRIC_EXPORT_INTERVAL", Milliseconds(MetricExportInterval))
            .WithEnvironment("OTEL_EXPORTER_OTLP_TIMEOUT", Milliseconds(ExportTimeout));
    }

    /// <summary>A duration as the OTEL_* variables take it: whole milliseconds.</summary>
    internal static string Milliseconds(TimeSpan value) => ((int)value.TotalMilliseconds).ToString(System.Globalization.CultureInfo.InvariantCulture);

    /// <summary>How often each service exports its metrics under the AppHost (run mode).</summary>
    public static readonly TimeSpan MetricExportInterval = TimeSpan.FromSeconds(5);

    /// <summary>How long a service's export to the dashboard may take under the AppHost (run mode).</summary>
    public static readonly TimeSpan ExportTimeout = TimeSpan.FromSeconds(2);

    /// <summary>
    /// The service's cleartext HTTP/2 listener, endpoint <c>h2</c>, which the Gateway relays uploads over
    /// (Gateway.Upstream): a project is given its port in <c>Http2__Port</c> (a free one; published, the images' 8081),
    /// and listens there on its HTTP/1.1 host (ServiceDefaults/Http/Http2Listener.cs); an image listens on 8081 (Service.FromImage).
    /// </summary>
    public static Service WithHttp2Listener(this Service service)
    {
        var publish = service.ApplicationBuilder.ExecutionContext.IsPublishMode;
        return service.Each(
            project => project.WithHttpEndpoint(targetPort: publish ? Service.ContainerHttp2Port : null, name: SystemContract.Http2Endpoint, env: SystemContract.Http2Port, isProxied: false)
                .WithEndpoint(SystemContract.Http2Endpoint, endpoint => endpoint.Transport = "http2"),
            _ => { });
    }

    /// <summary>
    /// Callers reach the service's own Kestrel, not a DCP proxy in front of it. By default Aspire puts a proxy on
    /// every endpoint, so that replicas of one service share one address and a restarted process keeps its port.
    /// It costs: the 25.8 MB catalog took p50 162 ms through the proxy against 101 ms direct, DCP spent about
    /// 44 ms of CPU per catalog it relayed, and a product list crosses three hops (docs/dashboard.md). Process mode
    /// has one process per service, so the proxy buys nothing; with replicas (<c>WithReplicas</c>) it is what
    /// spreads requests, so a replicated project keeps it. A container is published on a port of this machine
    /// (<paramref name="port"/>, else a free one), and other containers call it on the containers' network.
    /// The HTTP/1.1 port stays the launch profile's (http://localhost:5100 for the Gateway, 5101 for Catalog.Api), which
    /// Aspire gives the process as <c>ASPNETCORE_URLS</c>, or a free one when Aspire is asked for random ports
    /// (<c>aspire start --isolated</c> and the AppHost tests), so two instances never collide.
    /// </summary>
    public static Service WithDirectEndpoint(this Service service, int? port = null)
    {
        var builder = service.ApplicationBuilder;
        if (builder.ExecutionContext.IsPublishMode && port is not null)
        {
            // Published, the port the deployment publishes it on (the swarm stack's, on every node).
            return service.Each(project => project.WithEndpoint(SystemContract.HttpEndpoint, endpoint => endpoint.Port = port, createIfNotExists: false), _ => { });
        }

        if (!builder.ExecutionContext.IsRunMode)
        {
            return service;
        }

        var randomPorts = builder.Configuration.GetValue("DcpPublisher:RandomizePorts", false);
        return service.Each(
            project =>
            {
                if (project.Resource.TryGetLastAnnotation<ReplicaAnnotation>(out var replicas) && replicas.Replicas > 1)
                {
                    return;
                }

                // A second replica (catalog-2) shares the launch profile, and so its port: it takes a free one instead.
                var secondReplica = project.Resource.Name != service.Name;
                foreach (var name in new[] { SystemContract.HttpEndpoint, SystemContract.Http2Endpoint })
                {
                    project.WithEndpoint(name, endpoint =>
                    {
                        endpoint.IsProxied = false;
                        if (randomPorts || secondReplica)
                        {
                            endpoint.Port = null;
                            endpoint.TargetPort = null;
                        }
                    }, createIfNotExists: false);
                }
            },
            container =>
            {
                container.WithEndpoint(SystemContract.HttpEndpoint, endpoint =>
                {
                    endpoint.IsProxied = false;
                    endpoint.Port = randomPorts ? null : port;
                }, createIfNotExists: false);
                container.WithEndpoint(SystemContract.Http2Endpoint, endpoint => endpoint.IsProxied = false, createIfNotExists: false);
            });
    }

    /// <summary>
    /// Uploads.Api's storage shared by every replica, so any replica serves any upload: in container mode the named
    /// <paramref name="volume"/>; published, the volume <c>uploads-data</c> (Publishing.cs); in process mode, its folder.
    /// Mounted at <see cref="SystemContract.UploadsContainerDataPath"/>, a path of its own (HOME holds the image's
    /// dotfiles and whatever writes there). The image runs as its "app" user and has no such folder, and Docker gives a
    /// new volume mounted on a missing path to root (Podman to the container's user): container mode gives the volume
    /// to "app" before any replica starts (<see cref="AppOwnedVolumeAnnotation"/>).
    /// </summary>
    public static Service WithUploadsVolume(this Service uploads, string volume) =>
        uploads.Each(
            project => project.PublishWithUploadsVolume(),
            container => container
                .WithVolume(volume, SystemContract.UploadsContainerDataPath)
                .WithEnvironment(SystemContract.UploadsDataDirectory, SystemContract.UploadsContainerDataPath)
                .WithAnnotation(new AppOwnedVolumeAnnotation(volume, SystemContract.UploadsContainerDataPath)));

    /// <summary>The Gateway's own pages as the resource's links: the landing page (flags, and the last minute per route and variant) and the admin page.</summary>
    public static Service WithPublicPages(this Service gateway) =>
        gateway.Each(project => PublicPages(project), container => PublicPages(container));

    private static IResourceBuilder<T> PublicPages<T>(IResourceBuilder<T> gateway) where T : IResourceWithEndpoints =>
        gateway.WithExternalHttpEndpoints()
            .WithUrlForEndpoint("http", url => url.DisplayText = "Landing page: live by variant")
            .WithUrlForEndpoint("http", _ => new() { Url = "/admin/", DisplayText = "Admin page: switch flags" });

    /// <summary>
    /// LoadGen's control endpoint (rate, mode, status, A/B), on the port <c>LOADGEN_CONTROL_PORT</c> names, reached
    /// directly; its <c>/status</c> link is the Resources page's live line of LoadGen's figures (<see cref="LoadGenStatus"/>).
    /// </summary>
    public static Service WithControlEndpoint(this Service loadGen) => loadGen.Each(
        project => project.WithHttpEndpoint(name: "control", env: SystemContract.LoadGenControlPort, isProxied: false).WithStatusUrl(),
        container => container.WithHttpEndpoint(targetPort: Service.ContainerPort, name: "control", env: SystemContract.LoadGenControlPort, isProxied: false).WithStatusUrl());

    // The bare endpoint's link moves to the details pane, so the grid's one link for LoadGen is the live line.
    private static IResourceBuilder<T> WithStatusUrl<T>(this IResourceBuilder<T> loadGen) where T : IResourceWithEndpoints =>
        loadGen.WithUrlForEndpoint("control", url => url.DisplayLocation = UrlDisplayLocation.DetailsOnly)
            .WithUrlForEndpoint("control", _ => new() { Url = SystemContract.StatusPath, DisplayText = LoadGenStatus.Waiting });

    /// <summary>LoadGen's buttons: rate, mode, and "A/B: measure now" (LoadGenCommands).</summary>
    public static Service WithLoadGenCommands(this Service loadGen) => loadGen.Each(
        project => project.WithRateCommands().WithModeCommands().WithMeasureCommand(),
        container => container.WithRateCommands().WithModeCommands().WithMeasureCommand());

    public static Service WithArgs(this Service service, params string[] args) =>
        service.Each(p => p.WithArgs(args), c => c.WithArgs(args));

    /// <summary>Waits for a start from the dashboard.</summary>
    public static Service WithExplicitStart(this Service service) =>
        service.Each(p => p.WithExplicitStart(), c => c.WithExplicitStart());

    public static Service PublishAsExplicitStart(this Service service) =>
        service.Each(p => p.PublishAsExplicitStart(), _ => { });

    public static Service PublishWithReplicas(this Service service, IResourceBuilder<ParameterResource> replicas) =>
        service.Each(p => p.PublishWithReplicas(replicas), _ => { });
}
