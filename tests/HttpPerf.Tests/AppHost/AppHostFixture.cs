using Aspire.Hosting.ApplicationModel;
using Aspire.Hosting.Testing;
using Aspire.Hosting;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.Tests.Infrastructure;

namespace HttpPerf.Tests.AppHost;

/// <summary>
/// The real AppHost in process mode (<see cref="AppHostUnderTest"/>), with settings of the test's own: a flags file and
/// the Uploads folder in a temp folder (the developer's stay untouched), by default a 2,000-product catalog there too
/// (fast to seed and fetch; null keeps the AppHost's own, 25.8 MB). Ports are random (Aspire.Hosting.Testing asks for
/// it), so it runs beside a developer's AppHost.
/// </summary>
public class AppHostFixture : AppHostUnderTest
{
    public const int SmallCatalog = 2_000;
    public static readonly string[] ServiceNames = [.. SystemContract.Services.Select(s => s.Name)];

    private readonly string _work = Directory.CreateTempSubdirectory("httpperf-apphost-").FullName;

    private readonly int? _productCount;

    private readonly string[] _args;

    /// <summary>A small catalog, in a temp folder of its own (xunit's class fixture: one public constructor).</summary>
    public AppHostFixture()
        : this(SmallCatalog)
    {
    }

    /// <summary><paramref name="productCount"/> products in a temp folder; null keeps the AppHost's own catalog.</summary>
    internal AppHostFixture(int? productCount, params string[] args)
        : base(startTimeout: TimeSpan.FromMinutes(4), stopTimeout: TimeSpan.FromMinutes(1))
    {
        _productCount = productCount;
        _args = args;
    }

    public string FlagsFile => Path.Combine(_work, "flags.json");

    public string UploadsDirectory => Path.Combine(_work, "uploads");

    /// <summary>LoadGen's state when the four services had become healthy: it waits to be started.</summary>
    public string? LoadGenStateAtStart { get; private set; }

    /// <summary>The service processes DCP started, by resource, read from the resources' snapshots.</summary>
    public Dictionary<string, int> ProcessIds { get; } = [];

    protected override IEnumerable<string> Settings => [$"--FeatureFlags:File={FlagsFile}", .. _args];

    protected override IReadOnlyList<string> AwaitedHealthy => ServiceNames;

    protected override void Configure(IDistributedApplicationTestingBuilder builder)
    {
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
    }

    protected override void OnStarted(IReadOnlyList<ResourceEvent> healthy)
    {
        foreach (var (resource, pid) in Property(healthy, "executable.pid"))
        {
            ProcessIds[resource] = Convert.ToInt32(pid, System.Globalization.CultureInfo.InvariantCulture);
        }

        LoadGenStateAtStart = App.ResourceNotifications.TryGetCurrentState(SystemContract.LoadGen, out var loadGen)
            ? loadGen.Snapshot.State?.Text
            : null;
    }

    protected override void OnStopped()
    {
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
