extern alias AppHostAssembly;

using Aspire.Hosting.ApplicationModel;
using Aspire.Hosting.Testing;
using Aspire.Hosting;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.ServiceDefaults.FlagSources;
using HttpPerf.ServiceDefaults;
using HttpPerf.Tests.Infrastructure;
using Microsoft.Extensions.DependencyInjection;

namespace HttpPerf.Tests.AppHost;

/// <summary>
/// The real AppHost (AppHost/AppHost.cs), started by Aspire.Hosting.Testing with the dashboard on, as
/// <c>dotnet run --project AppHost</c> starts it, with settings of the test's own: a flags file and the Uploads
/// folder in a temp folder (the developer's stay untouched), by default a 2,000-product catalog there too (fast to
/// seed and fetch; null keeps the AppHost's own, 25.8 MB), the admin key and the dashboard's keys. Ports are random (Aspire.Hosting.Testing asks for it), so it runs beside a
/// developer's AppHost. Every wait is bounded; the app is stopped whatever happens.
/// </summary>
public class AppHostFixture : IDashboardAppHost
{
    public const int SmallCatalog = 2_000;
    public static readonly TimeSpan StartTimeout = TimeSpan.FromMinutes(4);
    public static readonly string[] ServiceNames = [.. SystemContract.Services.Select(s => s.Name)];

    private readonly string _work = Directory.CreateTempSubdirectory("httpperf-apphost-").FullName;

    private readonly int? _productCount;

    /// <summary>A small catalog, in a temp folder of its own (xunit's class fixture: one public constructor).</summary>
    public AppHostFixture()
        : this(SmallCatalog)
    {
    }

    /// <summary><paramref name="productCount"/> products in a temp folder; null keeps the AppHost's own catalog.</summary>
    internal AppHostFixture(int? productCount, params string[] args)
    {
        _productCount = productCount;
        _args = args;
    }

    private readonly string[] _args = [];

    public DistributedApplication App { get; private set; } = null!;

    public string AdminKey { get; } = $"test-admin-key-{Guid.NewGuid():N}";

    public string FlagsFile => Path.Combine(_work, "flags.json");

    public string UploadsDirectory => Path.Combine(_work, "uploads");

    public Uri Dashboard { get; private set; } = null!;

    public string DashboardApiKey { get; } = $"test-dashboard-key-{Guid.NewGuid():N}";

    /// <summary>The dashboard's login token: <c>{Dashboard}/login?t={token}</c>, as the AppHost prints it.</summary>
    public string BrowserToken { get; } = $"test-browser-token-{Guid.NewGuid():N}";

    /// <summary>LoadGen's state when the four services had become healthy: it waits to be started.</summary>
    public string? LoadGenStateAtStart { get; private set; }

    /// <summary>The service processes DCP started, by resource, read from the resources' snapshots.</summary>
    public Dictionary<string, int> ProcessIds { get; } = [];

    public HttpClient Gateway { get; private set; } = null!;

    public async ValueTask InitializeAsync()
    {
        using var timeout = new CancellationTokenSource(StartTimeout);
        var builder = await DistributedApplicationTestingBuilder.CreateAsync<AppHostAssembly::Projects.AppHost>(
            [
                $"--FeatureFlags:File={FlagsFile}",
                $"--Parameters:{SystemContract.AdminKeyParameter}={AdminKey}",
                .. DashboardArgs(DashboardApiKey, BrowserToken),
                .. _args,
            ],
            (application, _) => application.DisableDashboard = false,
            timeout.Token);
        builder.KeepLogs();
        if (_productCount is int count)
        {
            // Every Catalog replica (catalog, catalog-2): one SQLite file, seeded by the first.
            foreach (var catalog in builder.Resources.OfType<ProjectResource>().Where(r => r.Name == SystemContract.Catalog || r.Name.StartsWith($"{SystemContract.Catalog}-", StringComparison.Ordinal)).ToList())
            {
                builder.CreateResourceBuilder(catalog)
                    .WithEnvironment(SystemContract.CatalogDataDirectory, Path.Combine(_work, "catalog"))
                    .WithEnvironment(SystemContract.CatalogProductCount, count.ToString(System.Globalization.CultureInfo.InvariantCulture));
            }
        }

        builder.CreateResourceBuilder<ProjectResource>(SystemContract.Uploads)
            .WithEnvironment(SystemContract.UploadsDataDirectory, UploadsDirectory);

        App = await builder.BuildAsync(timeout.Token);
        foreach (var ready in await App.StartHealthyAsync(ServiceNames, StartTimeout, CancellationToken.None))
        {
            if (ready.Snapshot.Properties.FirstOrDefault(p => p.Name == "executable.pid")?.Value is { } pid)
            {
                ProcessIds[ready.Resource.Name] = Convert.ToInt32(pid, System.Globalization.CultureInfo.InvariantCulture);
            }
        }

        LoadGenStateAtStart = App.ResourceNotifications.TryGetCurrentState(SystemContract.LoadGen, out var loadGen)
            ? loadGen.Snapshot.State?.Text
            : null;
        // Proxied, so Aspire.Hosting.Testing gave it a random port: ask the resource.
        Dashboard = App.GetEndpoint("aspire-dashboard", "http");
        Gateway = App.CreateHttpClient(SystemContract.Gateway);
        Gateway.Timeout = TimeSpan.FromSeconds(60);
    }

    /// <summary>
    /// The dashboard's own addresses, free ones (Aspire.Hosting.Testing's defaults are fixed ports), and its keys and
    /// login token (else they are generated, and the keys kept in the developer's user secrets of the AppHost).
    /// </summary>
    public static string[] DashboardArgs(string apiKey, string browserToken) =>
    [
        $"--ASPNETCORE_URLS=http://localhost:{Ports.Free()}",
        $"--ASPIRE_DASHBOARD_OTLP_ENDPOINT_URL=http://localhost:{Ports.Free()}",
        $"--AppHost:DashboardApiKey={apiKey}",
        $"--AppHost:OtlpApiKey=test-otlp-key-{Guid.NewGuid():N}",
        $"--ASPIRE_DASHBOARD_FRONTEND_BROWSERTOKEN={browserToken}",
    ];

    public ResourceCommandService Commands => App.Services.GetRequiredService<ResourceCommandService>();

    public async ValueTask DisposeAsync()
    {
        GC.SuppressFinalize(this);
        Gateway?.Dispose();
        if (App is not null)
        {
            using var timeout = new CancellationTokenSource(TimeSpan.FromMinutes(1));
            try
            {
                await App.StopAsync(timeout.Token);
            }
            finally
            {
                await App.DisposeAsync();
            }
        }

        try
        {
            Directory.Delete(_work, recursive: true);
        }
        catch (IOException)
        {
            // Best effort: a temp folder.
        }
    }
}
