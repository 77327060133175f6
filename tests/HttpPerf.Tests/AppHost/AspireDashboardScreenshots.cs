using System.Diagnostics;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.ServiceDefaults;
using HttpPerf.Tests.Infrastructure;
using Microsoft.Playwright;

namespace HttpPerf.Tests.AppHost;

/// <summary>
/// Remakes docs/dashboard.md's pictures of the real Aspire dashboard, when asked (it takes about three minutes):
/// <c>ASPIRE_DASHBOARD_SCREENSHOTS=docs/dashboard dotnet test HttpPerf.slnx --filter AspireDashboardScreenshots</c>.
/// The AppHost runs at the default catalog size with its dashboard; Chromium logs in with the token, as a person
/// does with the URL the AppHost prints, starts LoadGen, opens the catalog's command menu and flips
/// Catalog.Serialization to naive, and runs "A/B: measure now" from LoadGen's menu.
/// </summary>
[Collection(Lanes.Orchestrated)]
[Trait(Kind.Name, Kind.AppHost)]
public sealed class AspireDashboardScreenshots
{
    [Fact]
    public async Task The_resources_a_command_menu_the_catalog_chart_a_trace_and_the_AB_answer()
    {
        await using var run = await OptInRun.DashboardPicturesAsync("docs/dashboard.md's pictures of the Aspire dashboard", new AppHostFixture(productCount: null));

        // LoadGen, started from its row; a minute of load that follows the flags, all optimized.
        await DashboardPage.StartLoadGenAsync(run.Page);
        await Task.Delay(TimeSpan.FromSeconds(60), Cancel);
        // After that minute: LoadGen's line (the text of its /status link) says what it has sent.
        await DashboardPage.OpenResourcesAsync(run.Page);
        await run.Page.WaitForTimeoutAsync(3_000);
        await run.ShootAsync(run.Page, "aspire-resources.png");

        // The catalog's command menu: "⋯", then Commands.
        await DashboardPage.OpenCommandsAsync(run.Page, SystemContract.Catalog);
        await run.ShootAsync(run.Page, "aspire-command-menu.png");
        await run.Page.Keyboard.PressAsync("Escape");

        // The flip as README's "Watching a flag flip" has it: the catalog's chart open over the last minute (a point
        // every 2 s), the command run from elsewhere (a second tab: here, the way the dashboard runs it), and the
        // chart shot every 2 s from the flip on, each picture named by its second, to read when a person sees it.
        await DashboardPage.OpenChartAsync(run.Page, SystemContract.Catalog, "http.server.request.duration", minutes: 1);
        await run.Page.WaitForTimeoutAsync(8_000);
        var flipped = Stopwatch.StartNew();
        var flip = await run.AppHost.Commands.ExecuteCommandAsync(SystemContract.Catalog, $"{Pitfalls.CatalogSerialization}-{PerfMode.Naive}", Cancel);
        Assert.True(flip.Success, flip.Message);
        await DashboardPage.ShootChartAfterFlipAsync(run, run.Page, "flip-timing", flipped);

        var served = await Http.GetUntilServedAsync(run.AppHost.Gateway, "/api/catalog/products", $"{Pitfalls.CatalogSerialization}={PerfMode.Naive}");
        Assert.Contains($"{Pitfalls.CatalogSerialization}={PerfMode.Naive}", served, StringComparison.Ordinal);
        await Task.Delay(TimeSpan.FromSeconds(20), Cancel);

        // The catalog's request duration over the flip, the last 5 minutes (a point every 10 s).
        await DashboardPage.OpenChartAsync(run.Page, SystemContract.Catalog, "http.server.request.duration", minutes: 5);
        await run.Page.WaitForTimeoutAsync(5_000);
        await run.ShootAsync(run.Page, "aspire-catalog-chart.png");

        // The audit record of the flip, in the Gateway's structured logs.
        await DashboardPage.FilterLogsAsync(run.Page, SystemContract.Gateway, "changed from");
        await run.ShootAsync(run.Page, "aspire-audit.png");

        // A product list's trace: LoadGen's span for the whole request, the hops under it.
        var traceId = await DashboardPage.TraceWithSpanAsync(run.AppHost, SystemContract.LoadGen, "products GET /api/products", Cancel);
        await DashboardPage.OpenTraceAsync(run.Page, traceId, "products GET /api/products");
        await run.ShootAsync(run.Page, "aspire-trace.png");

        // "A/B: measure now", from LoadGen's menu: the answer opens at once.
        await DashboardPage.OpenResourcesAsync(run.Page);
        await DashboardPage.RunCommandAsync(run.Page, SystemContract.LoadGen, "A/B: measure now");
        await Assertions.Expect(run.Page.GetByText("p50 optimized / naive").First).ToBeVisibleAsync(new() { Timeout = 70_000 });
        await run.Page.WaitForTimeoutAsync(1_000);
        await run.ShootAsync(run.Page, "aspire-ab.png");
    }
}
