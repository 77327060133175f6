using System.Reflection;
using HttpPerf.ServiceDefaults;

namespace Bench.LocalSystem;

/// <summary>
/// Catalog.Api, Uploads.Api, Frontend.Api and Gateway as separate processes on loopback, wired from the same
/// <see cref="SystemContract"/> the AppHost reads (names, the calls between services, the configuration keys of
/// docs/configuration.md): listening URL, <c>services__{name}__http__{i}</c> (one per replica),
/// <c>FeatureFlags__File</c> or <c>ConnectionStrings__flags</c>, <c>OTEL_*</c>. Catalog.Api, Frontend.Api and
/// Uploads.Api may run as several replicas, each on its own port; the Uploads replicas share one data directory.
/// </summary>
/// <remarks>
/// The AppHost is the system's one description, and the tests of the system as a user runs it start it
/// (tests/HttpPerf.Tests/AppHost). This remains for what the AppHost cannot give: the bench's fresh processes per
/// mode, several replicas each on its own port so that one can be killed and brought back at the same address
/// (replica, fault and connection-spread tests), flags in a real redis-server without a container engine, and
/// per-test settings (a small catalog, upload limits, an in-test OTLP receiver).
/// </remarks>
public sealed class LocalSystem : IAsyncDisposable
{
    public static readonly string CurrentConfiguration =
        typeof(LocalSystem).Assembly.GetCustomAttribute<AssemblyConfigurationAttribute>()?.Configuration ?? "Debug";

    private readonly bool _ownsWorkDirectory;

    private LocalSystem(string workDirectory, bool ownsWorkDirectory)
    {
        WorkDirectory = workDirectory;
        _ownsWorkDirectory = ownsWorkDirectory;
    }

    public string WorkDirectory { get; }

    public string FlagsFile => Path.Combine(WorkDirectory, "flags.json");

    public string CatalogDataDirectory => Path.Combine(WorkDirectory, "catalog");

    public string UploadsDataDirectory => Path.Combine(WorkDirectory, "uploads");

    /// <summary>A service's ASP.NET Core temp folder (<c>ASPNETCORE_TEMP</c>): form and formatter buffers spill here.</summary>
    public string TempDirectory(string project) => Path.Combine(WorkDirectory, "tmp", project);

    /// <summary>The first Catalog.Api replica (the only one unless <see cref="LocalSystemOptions.Replicas"/> says more).</summary>
    public ServiceProcess Catalog => CatalogReplicas[0];

    public ServiceProcess Uploads => UploadsReplicas[0];

    public ServiceProcess Frontend => FrontendReplicas[0];

    public List<ServiceProcess> CatalogReplicas { get; } = [];

    public List<ServiceProcess> UploadsReplicas { get; } = [];

    public List<ServiceProcess> FrontendReplicas { get; } = [];

    public ServiceProcess Gateway { get; private set; } = null!;

    public IEnumerable<ServiceProcess> Services => [Gateway, .. FrontendReplicas, .. CatalogReplicas, .. UploadsReplicas];

    /// <summary>Ids of the committed uploads in the shared data directory (a folder each).</summary>
    public IReadOnlyList<string> StoredUploads() => Directory.Exists(UploadsDataDirectory)
        ? Directory.GetDirectories(UploadsDataDirectory).Select(d => Path.GetFileName(d)!).Where(n => !n.StartsWith('.')).Order().ToList()
        : [];

    /// <summary>Files of uploads in progress or interrupted, in every replica's <c>.incoming/&lt;instance&gt;/</c> (their lock files aside).</summary>
    public IReadOnlyList<string> IncomingFiles()
    {
        var incoming = Path.Combine(UploadsDataDirectory, ".incoming");
        return Directory.Exists(incoming)
            ? Directory.GetFiles(incoming, "*", SearchOption.AllDirectories).Where(f => Path.GetFileName(f) != ".lock").ToList()
            : [];
    }

    public static async Task<LocalSystem> StartAsync(LocalSystemOptions options, CancellationToken cancellationToken = default)
    {
        var owns = options.WorkDirectory is null;
        var work = options.WorkDirectory ?? Directory.CreateTempSubdirectory("httpperf-").FullName;
        Directory.CreateDirectory(work);
        var system = new LocalSystem(work, owns);
        try
        {
            await system.StartServicesAsync(options, cancellationToken);
            return system;
        }
        catch
        {
            await system.DisposeAsync();
            throw;
        }
    }

    /// <summary>Starts a Catalog.Api replica; after a stop or a kill, <paramref name="address"/> brings it back where Frontend and Gateway look for it.</summary>
    public async Task<ServiceProcess> StartCatalogAsync(LocalSystemOptions options, Uri? address = null, CancellationToken cancellationToken = default)
    {
        var catalog = ServiceEnvironment(options, address);
        KeepHttp2Address(catalog, address);
        catalog[SystemContract.CatalogDataDirectory] = CatalogDataDirectory;
        if (options.ProductCount is { } count)
        {
            catalog[SystemContract.CatalogProductCount] = count.ToString(System.Globalization.CultureInfo.InvariantCulture);
        }

        return Replace(CatalogReplicas, await StartAsync("Catalog.Api", catalog, options, cancellationToken), address);
    }

    /// <summary>Starts an Uploads.Api replica; after a stop or a kill, <paramref name="address"/> brings it back where the Gateway looks for it.</summary>
    public async Task<ServiceProcess> StartUploadsAsync(LocalSystemOptions options, Uri? address = null, CancellationToken cancellationToken = default)
    {
        var uploads = ServiceEnvironment(options, address);
        KeepHttp2Address(uploads, address);
        uploads[SystemContract.UploadsDataDirectory] = UploadsDataDirectory;
        return Replace(UploadsReplicas, await StartAsync("Uploads.Api", uploads, options, cancellationToken), address);
    }

    public async ValueTask DisposeAsync()
    {
        foreach (var service in new[] { Gateway }.Where(s => s is not null).Concat(FrontendReplicas).Concat(CatalogReplicas).Concat(UploadsReplicas))
        {
            await service.DisposeAsync();
        }

        if (_ownsWorkDirectory)
        {
            try
            {
                Directory.Delete(WorkDirectory, recursive: true);
            }
            catch (IOException)
            {
                // Best effort: a temp folder.
            }
        }
    }

    private async Task StartServicesAsync(LocalSystemOptions options, CancellationToken cancellationToken)
    {
        // Leaves first, so each caller starts knowing where its dependencies listen. Replicas one at a time: the
        // first Catalog seeds the shared SQLite file, the others find it there.
        for (var i = 0; i < options.Replicas; i++)
        {
            var catalogTask = StartCatalogAsync(options, cancellationToken: cancellationToken);
            await StartUploadsAsync(options, cancellationToken: cancellationToken);
            await catalogTask;
        }

        var frontend = CallerEnvironment(options, SystemContract.Frontend);
        for (var i = 0; i < options.Replicas; i++)
        {
            FrontendReplicas.Add(await StartAsync("Frontend.Api", frontend, options, cancellationToken));
        }

        var gateway = CallerEnvironment(options, SystemContract.Gateway);
        if (options.AdminKey is { } adminKey)
        {
            gateway[SystemContract.AdminKey] = adminKey;
        }

        gateway.TryAdd(SystemContract.AllowModeOverride, options.AllowModeOverride ? "true" : "false");
        gateway.TryAdd(SystemContract.InlineSocketCompletions, "1"); // as the AppHost sets it

        Gateway = await StartAsync("Gateway", gateway, options, cancellationToken);
    }

    /// <summary>A restarted replica takes the place of the one that listened at <paramref name="address"/>; a new one is added.</summary>
    private static ServiceProcess Replace(List<ServiceProcess> replicas, ServiceProcess started, Uri? address)
    {
        var index = address is null ? -1 : replicas.FindIndex(r => r.BaseAddress == started.BaseAddress);
        if (index >= 0)
        {
            replicas[index] = started;
        }
        else
        {
            replicas.Add(started);
        }

        return started;
    }

    /// <summary>A service's environment with service discovery's addresses of what it calls: <c>services__{name}__http__{i}</c>, one per replica.</summary>
    private Dictionary<string, string> CallerEnvironment(LocalSystemOptions options, string service)
    {
        var environment = ServiceEnvironment(options);
        foreach (var called in SystemContract.Spec(service).Calls)
        {
            var replicas = Replicas(called);
            for (var i = 0; i < replicas.Count; i++)
            {
                environment[SystemContract.ServiceAddress(called, i)] = replicas[i].BaseAddress.ToString();
                environment[SystemContract.ServiceAddress(called, i, SystemContract.Http2Endpoint)] = replicas[i].Http2Address!.ToString();
            }
        }

        return environment;
    }

    private List<ServiceProcess> Replicas(string service) => service switch
    {
        SystemContract.Catalog => CatalogReplicas,
        SystemContract.Uploads => UploadsReplicas,
        SystemContract.Frontend => FrontendReplicas,
        _ => throw new ArgumentException($"{service} has no replicas here.", nameof(service)),
    };

    private Dictionary<string, string> ServiceEnvironment(LocalSystemOptions options, Uri? address = null)
    {
        var environment = new Dictionary<string, string>(options.Environment);
        if (options.RedisConnectionString is { } redis)
        {
            environment[SystemContract.FlagsConnectionString] = redis;
        }
        else
        {
            environment[SystemContract.FlagsFile] = FlagsFile;
        }

        if (address is not null)
        {
            environment["ASPNETCORE_URLS"] = address.GetLeftPart(UriPartial.Authority);
        }
        else if (options.FarSide is { } farSide)
        {
            environment["ASPNETCORE_URLS"] = $"http://{farSide.FarAddress}:0";
        }

        return environment;
    }

    /// <summary>A replica brought back at <paramref name="address"/> takes its old HTTP/2 listener's address too, where the Gateway looks for it.</summary>
    private void KeepHttp2Address(Dictionary<string, string> environment, Uri? address)
    {
        if (Services.FirstOrDefault(s => s is not null && address is not null && s.BaseAddress == address)?.Http2Address is { } http2)
        {
            environment[SystemContract.Http2Port] = http2.Port.ToString(System.Globalization.CultureInfo.InvariantCulture);
        }
    }

    private Task<ServiceProcess> StartAsync(string project, Dictionary<string, string> environment, LocalSystemOptions options, CancellationToken cancellationToken)
    {
        // The AppHost's resource name, as the dashboard shows it: catalog, frontend, uploads, gateway.
        environment.TryAdd("OTEL_SERVICE_NAME", SystemContract.Services.Single(s => s.Project == project).Name);
        environment["ASPNETCORE_TEMP"] = Directory.CreateDirectory(TempDirectory(project)).FullName;
        return ServiceProcess.StartAsync(project, AssemblyPath(project, options.Configuration), environment, cancellationToken, options.FarSide);
    }

    /// <summary>A service's built assembly, to start it as a process (<c>dotnet Project.dll</c>).</summary>
    public static string AssemblyPath(string project, string configuration)
    {
        var assembly = Path.Combine(RepositoryRoot(), project, "bin", configuration, "net10.0", project + ".dll");
        return File.Exists(assembly)
            ? assembly
            : throw new FileNotFoundException($"Build {project} in {configuration} first (dotnet build -c {configuration}).", assembly);
    }

    /// <summary>The folder holding the .slnx, found upwards from this assembly.</summary>
    public static string RepositoryRoot()
    {
        for (var directory = new DirectoryInfo(AppContext.BaseDirectory); directory is not null; directory = directory.Parent)
        {
            if (directory.EnumerateFiles("*.slnx").Any())
            {
                return directory.FullName;
            }
        }

        throw new InvalidOperationException($"No .slnx above {AppContext.BaseDirectory}.");
    }
}
