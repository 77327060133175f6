using System.Diagnostics;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.ServiceDefaults;
using HttpPerf.Tests.AppHost;
using HttpPerf.Tests.Infrastructure;

namespace HttpPerf.Tests.Containers;

/// <summary>
/// Remakes docs/deploy.md's pictures of the dashboard in container mode, when asked (about five minutes):
/// <c>ASPIRE_DASHBOARD_SCREENSHOTS=docs/dashboard dotnet test HttpPerf.slnx --filter ContainerDashboardScreenshots</c>.
/// Container mode at the default catalog size, and Chromium following README's "Watching a flag flip" as a person
/// does: ▶ on the loadgen row; on Metrics, <c>catalog</c>, <c>http.server.request.duration</c> and Last 1 minute;
/// in a second tab, catalog-2's ⋯ → Commands → Catalog.Serialization: naive. The chart, left open in the first tab,
/// is shot every 2 s for 20 s from the flip (container-flip-timing/), then with the step in it.
/// </summary>
[Collection(Lanes.Orchestrated)]
[Trait(Kind.Name, Kind.Containers)]
public sealed class ContainerDashboardScreenshots
{
    [Fact]
    public async Task README_s_flag_flip_from_a_replica_s_menu_on_the_catalog_chart()
    {
        await using var run = await OptInRun.DashboardPicturesAsync("docs/deploy.md's pictures of the dashboard in container mode", new DefaultCatalog());

        // 1. ▶ on the loadgen row; its URLs column says what it has sent.
        await DashboardPage.StartLoadGenAsync(run.Page, then: ", 0 errors");
        await run.Page.WaitForTimeoutAsync(45_000);
        await run.ShootAsync(run.Page, "container-resources.png");

        // 2. Metrics: catalog (every replica in one chart), its request duration, the last minute.
        await DashboardPage.PickChartAsync(run.Page, @"^\s*catalog \(application\)\s*$", "http.server.request.duration", "Last 1 minute");
        await run.Page.WaitForTimeoutAsync(8_000);

        // 3. In a second tab, the flip from a replica's menu; the first tab's chart shot every 2 s from it.
        var tab = await run.LogInAsync();
        await DashboardPage.RunCommandAsync(tab, SystemContract.Catalog + "-2", $"{Pitfalls.CatalogSerialization}: {PerfMode.Naive}");
        var flipped = Stopwatch.StartNew();
        await DashboardPage.ShootChartAfterFlipAsync(run, run.Page, "container-flip-timing", flipped);

        var served = await Http.GetUntilServedAsync(run.AppHost.Gateway, "/api/catalog/products", $"{Pitfalls.CatalogSerialization}={PerfMode.Naive}");
        Assert.Contains($"{Pitfalls.CatalogSerialization}={PerfMode.Naive}", served, StringComparison.Ordinal);
        await Poll.UntilElapsedAsync(flipped, TimeSpan.FromSeconds(40));
        await run.ShootAsync(run.Page, "container-catalog-flip.png");
    }

    /// <summary>Container mode at the AppHost's default catalog size, as a person's run has it.</summary>
    internal sealed class DefaultCatalog : ContainerModeFixture
    {
        protected override int? ProductCount => null;
    }
}
