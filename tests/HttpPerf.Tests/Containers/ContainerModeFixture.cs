extern alias AppHostAssembly;

using Aspire.Hosting.ApplicationModel;
using Aspire.Hosting.Testing;
using Aspire.Hosting;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.ServiceDefaults;
using HttpPerf.Tests.Infrastructure;
using Microsoft.Extensions.DependencyInjection;

namespace HttpPerf.Tests.Containers;

/// <summary>
/// The real AppHost in container mode (<c>-- --containers</c>), started by Aspire.Hosting.Testing with the dashboard
/// on: every service from its image (built first when missing or stale, as a user's run does), two replicas each of
/// Catalog.Api, Frontend.Api and Uploads.Api, Redis for the flags. Settings of the test's own: a 2,000-product catalog
/// (<see cref="ProductCount"/>), an uploads volume of its own (removed at the end), a Redis without a data volume (the
/// developer's flags stay untouched), the admin key and the dashboard's keys. Where no container engine answers,
/// <see cref="Unavailable"/> says why and the tests skip.
/// </summary>
public class ContainerModeFixture : IDashboardAppHost
{
    public const int Replicas = 2;

    /// <summary>Images built (first run: about 40 s), nine containers started and seeded on two cores.</summary>
    public static readonly TimeSpan StartTimeout = TimeSpan.FromMinutes(8);

    public static readonly string[] Replicated = [SystemContract.Catalog, SystemContract.Frontend, SystemContract.Uploads];

    /// <summary>The engine the AppHost runs its containers on: the machine's own (Podman where both answer).</summary>
    public virtual string? Engine => ContainerEngine.Name;

    public virtual string? Unavailable => ContainerEngine.Unavailable;

    /// <summary>More of the AppHost's settings, after the fixture's own.</summary>
    protected virtual IEnumerable<string> Settings => [];

    /// <summary>The catalog's products: 2,000 (fast to seed and to serve), or null for the AppHost's default size.</summary>
    protected virtual int? ProductCount => 2000;

    public DistributedApplication App { get; private set; } = null!;

    public string AdminKey { get; } = $"test-admin-key-{Guid.NewGuid():N}";

    public string UploadsVolume { get; } = $"httpperf-test-uploads-{Guid.NewGuid():N}";

    public Uri Dashboard { get; private set; } = null!;

    public string DashboardApiKey { get; } = $"test-dashboard-key-{Guid.NewGuid():N}";

    /// <summary>The token of the dashboard's login URL, as the AppHost prints it.</summary>
    public string BrowserToken { get; } = $"test-browser-token-{Guid.NewGuid():N}";

    public HttpClient Gateway { get; private set; } = null!;

    /// <summary>The resources container mode makes of a replicated service: catalog-1, catalog-2.</summary>
    public static IReadOnlyList<string> ReplicasOf(string service) =>
        Replicated.Contains(service) ? [.. Enumerable.Range(1, Replicas).Select(i => $"{service}-{i}")] : [service];

    /// <summary>Every resource that runs as a container: the services' replicas, the Gateway, Redis.</summary>
    public static IReadOnlyList<string> Containers =>
        [.. SystemContract.Services.SelectMany(s => ReplicasOf(s.Name)), SystemContract.FlagsConnectionName];

    /// <summary>The engine's id of each running container, by resource, read from the resources' snapshots.</summary>
    public Dictionary<string, string> ContainerIds { get; } = [];

    public ResourceCommandService Commands => App.Services.GetRequiredService<ResourceCommandService>();

    public async ValueTask InitializeAsync()
    {
        if (Unavailable is not null)
        {
            return;
        }

        using var timeout = new CancellationTokenSource(StartTimeout);
        var builder = await DistributedApplicationTestingBuilder.CreateAsync<AppHostAssembly::Projects.AppHost>(
            [
                "--AppHost:Containers=true",
                $"--Parameters:replicas={Replicas}",
                $"--Parameters:{SystemContract.AdminKeyParameter}={AdminKey}",
                $"--Containers:UploadsVolume={UploadsVolume}",
                .. AppHost.AppHostFixture.DashboardArgs(DashboardApiKey, BrowserToken),
                .. Settings,
            ],
            (application, _) => application.DisableDashboard = false,
            timeout.Token);
        builder.KeepLogs();
        foreach (var catalog in ProductCount is null ? [] : ReplicasOf(SystemContract.Catalog))
        {
            builder.CreateResourceBuilder<ContainerResource>(catalog).WithEnvironment(SystemContract.CatalogProductCount, ProductCount.ToString());
        }

        // Redis's data volume holds the developer's flags between runs of container mode: not the tests'.
        var redis = builder.Resources.Single(r => r.Name == SystemContract.FlagsConnectionName);
        foreach (var mount in redis.Annotations.OfType<ContainerMountAnnotation>().ToList())
        {
            redis.Annotations.Remove(mount);
        }

        App = await builder.BuildAsync(timeout.Token);
        foreach (var ready in await App.StartHealthyAsync(Containers, StartTimeout, CancellationToken.None))
        {
            if (ready.Snapshot.Properties.FirstOrDefault(p => p.Name == "container.id")?.Value is { } id)
            {
                ContainerIds[ready.Resource.Name] = id.ToString()!;
            }
        }

        Dashboard = App.GetEndpoint("aspire-dashboard", "http");
        Gateway = App.CreateHttpClient(SystemContract.Gateway);
        Gateway.Timeout = TimeSpan.FromSeconds(60);
    }

    /// <summary>
    /// A client of one replica's own published port, past the Gateway, with connections of its own (disposed with it).
    /// Not the factory's pooled handler (App.CreateHttpClient): a fault test restarts replicas, and a pooled connection
    /// to a container gone sends its next request into an address that drops it (the Redis test waited 100 s so).
    /// </summary>
    public HttpClient Replica(string resource) => new(new SocketsHttpHandler()) { BaseAddress = App.GetEndpoint(resource, "http") };

    public async ValueTask DisposeAsync()
    {
        GC.SuppressFinalize(this);
        Gateway?.Dispose();
        if (App is not null)
        {
            using var timeout = new CancellationTokenSource(TimeSpan.FromMinutes(2));
            try
            {
                await App.StopAsync(timeout.Token);
            }
            finally
            {
                await App.DisposeAsync();
            }
        }

        if (Unavailable is null)
        {
            try
            {
                ContainerEngine.RunWith(Engine!, "volume", "rm", "--force", UploadsVolume);
            }
            catch (InvalidOperationException)
            {
                // Best effort: a test volume, named by a fresh guid.
            }
        }
    }
}
