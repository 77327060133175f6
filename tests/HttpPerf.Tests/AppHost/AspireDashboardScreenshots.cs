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
    private static CancellationToken Cancel => TestContext.Current.CancellationToken;

    [Fact]
    public async Task The_resources_a_command_menu_the_catalog_chart_a_trace_and_the_AB_answer()
    {
        await using var run = OptInRun.ForDashboardPictures("docs/dashboard.md's pictures of the Aspire dashboard");
        var (system, page) = await run.StartAndLogInAsync(new AppHostFixture(productCount: null));

        // LoadGen, started from its row; a minute of load that follows the flags, all optimized.
        await DashboardPage.StartLoadGenAsync(page);
        await Task.Delay(TimeSpan.FromSeconds(60), Cancel);
        // After that minute: LoadGen's line (the text of its /status link) says what it has sent.
        await DashboardPage.OpenResourcesAsync(page);
        await page.WaitForTimeoutAsync(3_000);
        await run.ShootAsync(page, "aspire-resources.png");

        // The catalog's command menu: "⋯", then Commands.
        await DashboardPage.OpenCommandsAsync(page, SystemContract.Catalog);
        await run.ShootAsync(page, "aspire-command-menu.png");
        await page.Keyboard.PressAsync("Escape");

        // The flip as README's "Watching a flag flip" has it: the catalog's chart open over the last minute (a point
        // every 2 s), the command run from elsewhere (a second tab: here, the way the dashboard runs it), and the
        // chart shot every 2 s from the flip on, each picture named by its second, to read when a person sees it.
        await DashboardPage.OpenChartAsync(page, SystemContract.Catalog, "http.server.request.duration", minutes: 1);
        await page.WaitForTimeoutAsync(8_000);
        var flipped = Stopwatch.StartNew();
        var flip = await system.Commands.ExecuteCommandAsync(SystemContract.Catalog, $"{Pitfalls.CatalogSerialization}-{PerfMode.Naive}", Cancel);
        Assert.True(flip.Success, flip.Message);
        await DashboardPage.ShootChartAfterFlipAsync(run, page, "flip-timing", flipped);

        var served = await Http.GetUntilServedAsync(system.Gateway, "/api/catalog/products", $"{Pitfalls.CatalogSerialization}={PerfMode.Naive}");
        Assert.Contains($"{Pitfalls.CatalogSerialization}={PerfMode.Naive}", served, StringComparison.Ordinal);
        await Task.Delay(TimeSpan.FromSeconds(20), Cancel);

        // The catalog's request duration over the flip, the last 5 minutes (a point every 10 s).
        await DashboardPage.OpenChartAsync(page, SystemContract.Catalog, "http.server.request.duration", minutes: 5);
        await page.WaitForTimeoutAsync(5_000);
        await run.ShootAsync(page, "aspire-catalog-chart.png");

        // The audit record of the flip, in the Gateway's structured logs.
        await DashboardPage.FilterLogsAsync(page, SystemContract.Gateway, "changed from");
        await run.ShootAsync(page, "aspire-audit.png");

        // A product list's trace: LoadGen's span for the whole request, the hops under it.
        var traceId = await DashboardPage.TraceWithSpanAsync(system, SystemContract.LoadGen, "products GET /api/products", Cancel);
        await DashboardPage.OpenTraceAsync(page, traceId, "products GET /api/products");
        await run.ShootAsync(page, "aspire-trace.png");

        // "A/B: measure now", from LoadGen's menu: the answer opens at once.
        await DashboardPage.OpenResourcesAsync(page);
        await DashboardPage.RunCommandAsync(page, SystemContract.LoadGen, "A/B: measure now");
        await Assertions.Expect(page.GetByText("p50 optimized / naive").First).ToBeVisibleAsync(new() { Timeout = 70_000 });
        await page.WaitForTimeoutAsync(1_000);
        await run.ShootAsync(page, "aspire-ab.png");
    }
}
