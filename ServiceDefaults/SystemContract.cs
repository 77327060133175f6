namespace HttpPerf.ServiceDefaults;

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

    /// <summary>LoadGen's live state, which the AppHost reads every 2 s to show it on the resource: a probe, not a request to trace.</summary>
    public const string StatusPath = "/status";

    /// <summary>
    /// The logger category of the system's audit records, one per event an operator asks about: the Gateway's flag
    /// changes (event <c>FlagChanged</c>) and LoadGen's A/B measurements (<c>AbMeasured</c>).
    /// </summary>
    public const string AuditCategory = "HttpPerf.Audit";

    /// <summary>Absolute path of the shared flags file (when <see cref="FlagsConnectionString"/> is not set).</summary>
    public const string FlagsFile = "FeatureFlags__File";

    /// <summary>The Redis connection's name: Aspire's <c>AddRedis("flags")</c> + <c>WithReference</c> gives <c>ConnectionStrings__flags</c>.</summary>
    public const string FlagsConnectionName = "flags";

    public const string FlagsConnectionString = "ConnectionStrings__" + FlagsConnectionName;

    /// <summary>The Gateway's key for its admin routes: the AppHost's secret parameter <c>admin-key</c>.</summary>
    public const string AdminKey = "Admin__Key";

    public const string AdminKeyParameter = "admin-key";

    /// <summary>Whether any client may force a mode by header; on for the local demo and the tests, off when published.</summary>
    public const string AllowModeOverride = "Gateway__AllowModeOverride";

    public const string CatalogDataDirectory = "Catalog__DataDirectory";

    public const string UploadsDataDirectory = "Uploads__DataDirectory";

    /// <summary>LoadGen's control endpoint (<c>PUT /rate</c>, <c>PUT /mode</c>): its port.</summary>
    public const string LoadGenControlPort = "LOADGEN_CONTROL_PORT";

    /// <summary>
    /// The service's container image, as the SDK builds it (<c>dotnet publish -t:PublishContainer</c>; Directory.Build.props
    /// names it the same way): <c>httpperf/catalog</c>.
    /// </summary>
    public static string Image(string service) => $"httpperf/{service}";

    /// <summary>Service discovery's configuration for replica <paramref name="index"/> of <paramref name="service"/>.</summary>
    public static string ServiceAddress(string service, int index) => $"services__{service}__http__{index}";

    public static ServiceSpec Spec(string name) => Services.Single(s => s.Name == name);
}

/// <param name="Name">The resource name: the dashboard's, service discovery's (<c>http://catalog</c>) and <c>OTEL_SERVICE_NAME</c>.</param>
/// <param name="Project">The project folder and assembly name.</param>
/// <param name="Calls">The services it calls, by name.</param>
public sealed record ServiceSpec(string Name, string Project, IReadOnlyList<string> Calls);
