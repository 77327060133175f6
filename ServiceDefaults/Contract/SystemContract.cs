namespace HttpPerf.ServiceDefaults.Contract;

/// <summary>
/// The system as the two things that start it see it: the AppHost (Aspire, the one description of the system) and
/// LoadGen's <c>LocalSystem</c> (the bench's fresh processes per mode, and the replica and fault tests, which need
/// to kill and restart one replica). Both read the names, the calls between services and the configuration keys
/// from here, so they cannot drift apart (docs/configuration.md). Plain .NET: the AppHost compiles this file.
/// </summary>
public static class SystemContract
{
    public const string Catalog = "catalog";
    public const string Frontend = "frontend";
    public const string Uploads = "uploads";
    public const string Gateway = "gateway";
    public const string LoadGen = "loadgen";

    /// <summary>The four services in start order, each with its project folder and the services it calls.</summary>
    public static readonly IReadOnlyList<ServiceSpec> Services =
    [
        new(Catalog, "Catalog.Api", []),
        new(Uploads, "Uploads.Api", []),
        new(Frontend, "Frontend.Api", [Catalog]),
        new(Gateway, "Gateway", [Catalog, Frontend, Uploads]),
    ];

    /// <summary>Every service answers here when it is ready (200), and the Gateway's active health checks ask it.</summary>
    public const string HealthPath = "/health";

    /// <summary>Every service answers here while its process lives, ready or not.</summary>
    public const string AlivePath = "/alive";

    /// <summary>What a running service serves now, flag by flag: how the admin page sees a change land.</summary>
    public const string FlagsPath = "/flags";

    /// <summary>A service's runtime counters (allocations, CPU, working set), which the bench reads before and after a run.</summary>
    public const string RuntimePath = "/runtime";

    /// <summary>LoadGen's live state, which the AppHost reads every 2 s to show it on the resource: a probe, not a request to trace.</summary>
    public const string StatusPath = "/status";

    /// <summary>
    /// The logger category of the system's audit records, one per event an operator asks about: the Gateway's flag
    /// changes (event <c>FlagChanged</c>) and LoadGen's A/B measurements (<c>AbMeasured</c>).
    /// </summary>
    public const string AuditCategory = "HttpPerf.Audit";

    // The configuration sections the services bind, each to one options class (AddOptions<T>().BindConfiguration):
    // spelled here once. The keys below are the environment variables that the AppHost and LocalSystem set, where
    // configuration's ':' is '__'; a test checks that each names a property of the options class bound to its section.
    public const string CatalogSection = "Catalog";
    public const string FrontendSection = "Frontend";
    public const string UploadsSection = "Uploads";
    public const string GatewaySection = "Gateway";
    public const string AdminSection = "Admin";
    public const string FeatureFlagsSection = "FeatureFlags";
    public const string HttpClientsSection = "HttpClients";
    public const string HttpLimitsSection = "HttpLimits";
    public const string Http2Section = "Http2";

    /// <summary>Absolute path of the shared flags file (when <see cref="FlagsConnectionString"/> is not set).</summary>
    public const string FlagsFile = FeatureFlagsSection + "__File";

    /// <summary>The Redis connection's name: Aspire's <c>AddRedis("flags")</c> + <c>WithReference</c> gives <c>ConnectionStrings__flags</c>.</summary>
    public const string FlagsConnectionName = "flags";

    public const string FlagsConnectionString = "ConnectionStrings__" + FlagsConnectionName;

    /// <summary>Where Docker swarm and Compose mount a service's secrets, one file each, read as configuration (<c>Admin__Key</c>).</summary>
    public const string SecretsDirectory = "/run/secrets";

    /// <summary>The Gateway's key for its admin routes: the AppHost's secret parameter <c>admin-key</c>.</summary>
    public const string AdminKey = AdminSection + "__Key";

    public const string AdminKeyParameter = "admin-key";

    /// <summary>The header an admin request presents the key in; with it, the Gateway lets a request force a mode even where anonymous clients may not.</summary>
    public const string AdminKeyHeader = "X-Admin-Key";

    /// <summary>
    /// LoadGen's copy of the admin key (an environment variable, or a secret's file in <see cref="SecretsDirectory"/>),
    /// which it presents with every request, so its A/B forces modes through a Gateway that drops an anonymous one.
    /// </summary>
    public const string LoadGenAdminKey = "ADMIN_KEY";

    /// <summary>Whether any client may force a mode by header; on for the local demo and the tests, off when published.</summary>
    public const string AllowModeOverride = GatewaySection + "__AllowModeOverride";

    /// <summary>How often the Gateway probes each replica (every cluster's active health check), where it overrides appsettings.json's 5 s.</summary>
    public const string ProbeInterval = GatewaySection + "__ProbeInterval";

    public const string CatalogDataDirectory = CatalogSection + "__DataDirectory";

    /// <summary>Products in the catalog (about 25 MB of JSON at the default 86,000).</summary>
    public const string CatalogProductCount = CatalogSection + "__ProductCount";

    /// <summary>The benchmark's limits, off by default: Catalog's bytes from memory, and Frontend's relay of them.</summary>
    public const string CatalogEnableBaseline = CatalogSection + "__EnableBaseline";

    public const string FrontendEnableBaseline = FrontendSection + "__EnableBaseline";

    public const string UploadsDataDirectory = UploadsSection + "__DataDirectory";

    /// <summary>Where Uploads.Api's containers mount the volume their replicas share (container mode and published): a data path of its own, not the app user's home.</summary>
    public const string UploadsContainerDataPath = "/data/uploads";

    /// <summary>The bench's upload limit, off by default: a route that reads and drops the body.</summary>
    public const string UploadsEnableSink = UploadsSection + "__EnableSink";

    public const string UploadsMaxStoredBytes = UploadsSection + "__MaxStoredBytes";

    /// <summary>How long a pooled connection to a dependency lives before it is retired (a <see cref="TimeSpan"/>).</summary>
    public const string PooledConnectionLifetime = HttpClientsSection + "__PooledConnectionLifetime";

    /// <summary>
    /// How long a service keeps serving after it is told to stop (<c>Shutdown__Delay</c>), before it stops accepting:
    /// long enough for its callers to look its name up again and leave it (ServiceDefaults/Http/ShutdownDelay.cs).
    /// </summary>
    public const string ShutdownDelay = ShutdownSection + "__Delay";

    public const string ShutdownSection = "Shutdown";

    /// <summary>
    /// The .NET host's own bound on a stop, in seconds (<c>HostOptions.ShutdownTimeout</c>, 30 s by default): the
    /// shutdown delay and the drain of what is in flight both fall within it; what is still running then is dropped.
    /// </summary>
    public const string HostShutdownTimeoutSeconds = "shutdownTimeoutSeconds";

    /// <summary><c>dotnet Service.dll --health-probe</c>: the health check of a container (ServiceDefaults/HealthProbe.cs).</summary>
    public const string HealthProbeArgument = "--health-probe";

    /// <summary>
    /// The runtime's switch that runs socket completions on the thread that polls the sockets (epoll) instead of queueing
    /// them to the thread pool; read once, at the first socket. Set for the Gateway, whose work per completion is a copy.
    /// </summary>
    public const string InlineSocketCompletions = "DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS";

    /// <summary>The configuration key of environment variable <paramref name="variable"/>, for in-memory configuration: <c>Catalog:DataDirectory</c>.</summary>
    public static string ConfigurationKey(string variable) => variable.Replace("__", ":", StringComparison.Ordinal);

    /// <summary>LoadGen's control endpoint (<c>PUT /rate</c>, <c>PUT /mode</c>): its port.</summary>
    public const string LoadGenControlPort = "LOADGEN_CONTROL_PORT";

    /// <summary>
    /// The service's container image, as the SDK builds it (<c>dotnet publish -t:PublishContainer</c>; Directory.Build.props
    /// names it the same way): <c>httpperf/catalog</c>.
    /// </summary>
    public static string Image(string service) => $"httpperf/{service}";

    /// <summary>
    /// The name of each service's HTTP/1.1 listener, and of its cleartext HTTP/2 one (prior knowledge, no TLS), which
    /// the Gateway relays over where Gateway.Upstream says (docs/pitfalls/Gateway.Upstream.md). HTTP/1.1 listens where
    /// the platform's settings say (<c>ASPNETCORE_URLS</c>, <c>ASPNETCORE_HTTP_PORTS</c>), HTTP/2 at <see cref="Http2Port"/>
    /// (ServiceDefaults/Http/Http2Listener.cs); service discovery names them <c>http://catalog</c> and <c>http://_h2.catalog</c>.
    /// </summary>
    public const string HttpEndpoint = "http";

    /// <inheritdoc cref="HttpEndpoint"/>
    public const string Http2Endpoint = "h2";

    /// <summary>The port of a service's cleartext HTTP/2 listener, on the host of its first HTTP/1.1 address.</summary>
    public const string Http2Port = Http2Section + "__Port";

    /// <summary>Service discovery's configuration for replica <paramref name="index"/> of <paramref name="service"/>, at its <paramref name="endpoint"/>.</summary>
    public static string ServiceAddress(string service, int index, string endpoint = HttpEndpoint) => $"services__{service}__{endpoint}__{index}";

    public static ServiceSpec Spec(string name) => Services.Single(s => s.Name == name);
}
