extern alias AppHostAssembly;

using Aspire.Hosting;
using Aspire.Hosting.ApplicationModel;
using Aspire.Hosting.Testing;
using HttpPerf.ServiceDefaults.Contract;
using Microsoft.Extensions.DependencyInjection;

namespace HttpPerf.Tests.Infrastructure;

/// <summary>
/// The real AppHost (AppHost/AppHost.cs) as a test starts it, in process mode (AppHost/AppHostFixture.cs) or container
/// mode (Containers/ContainerModeFixture.cs): by Aspire.Hosting.Testing with the dashboard on, as
/// <c>dotnet run --project AppHost</c> starts it, with keys of the test's own (the admin API's, the dashboard's API and
/// login token), awaited healthy within <c>startTimeout</c>, and stopped, whatever happens, within <c>stopTimeout</c>.
/// Each mode adds its settings and what it reads once started. What a run needs to log in to the dashboard, read its
/// telemetry API and run its commands.
/// </summary>
public abstract class AppHostUnderTest(TimeSpan startTimeout, TimeSpan stopTimeout) : IAsyncLifetime
{
    public DistributedApplication App { get; private set; } = null!;

    public string AdminKey { get; } = $"test-admin-key-{Guid.NewGuid():N}";

    public Uri Dashboard { get; private set; } = null!;

    /// <summary>The key of the dashboard's telemetry API (<c>x-api-key</c>).</summary>
    public string DashboardApiKey { get; } = $"test-dashboard-key-{Guid.NewGuid():N}";

    /// <summary>The dashboard's login token: <c>{Dashboard}/login?t={token}</c>, as the AppHost prints it.</summary>
    public string BrowserToken { get; } = $"test-browser-token-{Guid.NewGuid():N}";

    public HttpClient Gateway { get; private set; } = null!;

    public ResourceCommandService Commands => App.Services.GetRequiredService<ResourceCommandService>();

    /// <summary>Why it cannot run on this machine (no container engine), or null; then it starts nothing.</summary>
    public virtual string? Unavailable => null;

    /// <summary>The mode's own settings of the AppHost, after the keys.</summary>
    protected abstract IEnumerable<string> Settings { get; }

    /// <summary>The resources awaited healthy, in turn, before the AppHost counts as started.</summary>
    protected abstract IReadOnlyList<string> AwaitedHealthy { get; }

    /// <summary>Changes to the model before it is built (the resources' environment, their mounts).</summary>
    protected virtual void Configure(IDistributedApplicationTestingBuilder builder)
    {
    }

    /// <summary>What the mode reads once <see cref="AwaitedHealthy"/> are healthy, from their snapshots (<see cref="Property"/>).</summary>
    protected virtual void OnStarted(IReadOnlyList<ResourceEvent> healthy)
    {
    }

    /// <summary>What the mode cleans up once the AppHost has stopped (best effort).</summary>
    protected virtual void OnStopped()
    {
    }

    public async ValueTask InitializeAsync()
    {
        if (Unavailable is not null)
        {
            return;
        }

        using var timeout = new CancellationTokenSource(startTimeout);
        var builder = await DistributedApplicationTestingBuilder.CreateAsync<AppHostAssembly::Projects.AppHost>(
            [
                $"--Parameters:{SystemContract.AdminKeyParameter}={AdminKey}",
                .. DashboardArgs(DashboardApiKey, BrowserToken),
                .. Settings,
            ],
            (application, _) => application.DisableDashboard = false,
            timeout.Token);
        builder.KeepLogs();
        Configure(builder);
        App = await builder.BuildAsync(timeout.Token);
        OnStarted(await App.StartHealthyAsync(AwaitedHealthy, startTimeout, CancellationToken.None));
        // Proxied, so Aspire.Hosting.Testing gave it a random port: ask the resource.
        Dashboard = App.GetEndpoint("aspire-dashboard", "http");
        Gateway = App.CreateHttpClient(SystemContract.Gateway);
        Gateway.Timeout = TimeSpan.FromSeconds(60);
    }

    /// <summary>
    /// The dashboard's own addresses, free ones (Aspire.Hosting.Testing's defaults are fixed ports), and its keys and
    /// login token (else they are generated, and the keys kept in the developer's user secrets of the AppHost).
    /// </summary>
    private static string[] DashboardArgs(string apiKey, string browserToken) =>
    [
        $"--ASPNETCORE_URLS=http://localhost:{Ports.Free()}",
        $"--ASPIRE_DASHBOARD_OTLP_ENDPOINT_URL=http://localhost:{Ports.Free()}",
        $"--AppHost:DashboardApiKey={apiKey}",
        $"--AppHost:OtlpApiKey=test-otlp-key-{Guid.NewGuid():N}",
        $"--ASPIRE_DASHBOARD_FRONTEND_BROWSERTOKEN={browserToken}",
    ];

    /// <summary>Each resource's snapshot property <paramref name="name"/> where it has one: <c>executable.pid</c>, <c>container.id</c>.</summary>
    protected static IEnumerable<(string Resource, object Value)> Property(IEnumerable<ResourceEvent> resources, string name) =>
        resources.Select(r => (r.Resource.Name, r.Snapshot.Properties.FirstOrDefault(p => p.Name == name)?.Value))
            .Where(r => r.Value is not null)
            .Select(r => (r.Name, r.Value!));

    public async ValueTask DisposeAsync()
    {
        GC.SuppressFinalize(this);
        Gateway?.Dispose();
        if (App is not null)
        {
            using var timeout = new CancellationTokenSource(stopTimeout);
            try
            {
                await App.StopAsync(timeout.Token);
            }
            finally
            {
                await App.DisposeAsync();
            }
        }

        OnStopped();
    }
}
