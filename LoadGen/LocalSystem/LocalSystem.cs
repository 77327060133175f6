using System.Reflection;

namespace LoadGen.LocalSystem;

/// <summary>
/// Catalog.Api, Uploads.Api, Frontend.Api and Gateway as separate processes on loopback, wired with
/// exactly the configuration contract the AppHost uses (see README): listening URL,
/// <c>services__{name}__http__0</c>, <c>FeatureFlags__File</c>, <c>OTEL_*</c>. Tests and the benchmark use it.
/// </summary>
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

    public ServiceProcess Catalog { get; private set; } = null!;

    public ServiceProcess Uploads { get; private set; } = null!;

    public ServiceProcess Frontend { get; private set; } = null!;

    public ServiceProcess Gateway { get; private set; } = null!;

    public IEnumerable<ServiceProcess> Services => [Gateway, Frontend, Catalog, Uploads];

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

    /// <summary>Starts Catalog.Api; after a stop or a kill, <paramref name="address"/> brings it back where Frontend and Gateway look for it.</summary>
    public async Task<ServiceProcess> StartCatalogAsync(LocalSystemOptions options, Uri? address = null, CancellationToken cancellationToken = default)
    {
        var catalog = ServiceEnvironment(options, address);
        catalog["Catalog__DataDirectory"] = CatalogDataDirectory;
        if (options.ProductCount is { } count)
        {
            catalog["Catalog__ProductCount"] = count.ToString(System.Globalization.CultureInfo.InvariantCulture);
        }

        Catalog = await StartAsync("Catalog.Api", catalog, options, cancellationToken);
        return Catalog;
    }

    /// <summary>Starts Uploads.Api; after a stop or a kill, <paramref name="address"/> brings it back where the Gateway looks for it.</summary>
    public async Task<ServiceProcess> StartUploadsAsync(LocalSystemOptions options, Uri? address = null, CancellationToken cancellationToken = default)
    {
        var uploads = ServiceEnvironment(options, address);
        uploads["Uploads__DataDirectory"] = UploadsDataDirectory;
        Uploads = await StartAsync("Uploads.Api", uploads, options, cancellationToken);
        return Uploads;
    }

    public async ValueTask DisposeAsync()
    {
        foreach (var service in new[] { Gateway, Frontend, Catalog, Uploads }.Where(s => s is not null))
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
        // Leaves first, so each caller starts knowing where its dependencies listen.
        var catalogTask = StartCatalogAsync(options, cancellationToken: cancellationToken);
        await StartUploadsAsync(options, cancellationToken: cancellationToken);
        await catalogTask;

        var frontend = ServiceEnvironment(options);
        frontend["services__catalog__http__0"] = Catalog.BaseAddress.ToString();
        Frontend = await StartAsync("Frontend.Api", frontend, options, cancellationToken);

        var gateway = ServiceEnvironment(options);
        gateway["services__catalog__http__0"] = Catalog.BaseAddress.ToString();
        gateway["services__frontend__http__0"] = Frontend.BaseAddress.ToString();
        gateway["services__uploads__http__0"] = Uploads.BaseAddress.ToString();
        if (options.AdminKey is { } adminKey)
        {
            gateway["Admin__Key"] = adminKey;
        }

        gateway.TryAdd("Gateway__AllowModeOverride", options.AllowModeOverride ? "true" : "false");

        Gateway = await StartAsync("Gateway", gateway, options, cancellationToken);
    }

    private Dictionary<string, string> ServiceEnvironment(LocalSystemOptions options, Uri? address = null)
    {
        var environment = new Dictionary<string, string>(options.Environment)
        {
            ["FeatureFlags__File"] = FlagsFile,
        };
        if (address is not null)
        {
            environment["ASPNETCORE_URLS"] = address.GetLeftPart(UriPartial.Authority);
        }

        return environment;
    }

    private Task<ServiceProcess> StartAsync(string project, Dictionary<string, string> environment, LocalSystemOptions options, CancellationToken cancellationToken)
    {
        environment.TryAdd("OTEL_SERVICE_NAME", project.ToLowerInvariant());
        environment["ASPNETCORE_TEMP"] = Directory.CreateDirectory(TempDirectory(project)).FullName;
        var assembly = Path.Combine(RepositoryRoot(), project, "bin", options.Configuration, "net10.0", project + ".dll");
        if (!File.Exists(assembly))
        {
            throw new FileNotFoundException($"Build {project} in {options.Configuration} first (dotnet build -c {options.Configuration}).", assembly);
        }

        return ServiceProcess.StartAsync(project, assembly, environment, cancellationToken);
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
