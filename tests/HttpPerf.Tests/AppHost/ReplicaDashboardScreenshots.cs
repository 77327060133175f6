using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.Tests.Infrastructure;
using Microsoft.Playwright;

namespace HttpPerf.Tests.AppHost;

/// <summary>
/// Remakes the pictures of docs/pitfalls/Frontend.Replicas.md from the real Aspire dashboard, when asked (about four
/// minutes): <c>ASPIRE_DASHBOARD_SCREENSHOTS=docs/dashboard dotnet test HttpPerf.slnx --filter ReplicaDashboardScreenshots</c>.
/// The AppHost runs with a 2,000-product catalog; product lists go through the Gateway at 2 a second, following the
/// flags; catalog-2 is frozen from its command menu for 40 s, once with Frontend.Replicas naive and once optimized;
/// then the frontend's request duration over both, and the trace of a hedged product list.
/// </summary>
[Trait(Kind.Name, Kind.AppHost)]
public sealed class ReplicaDashboardScreenshots
{
    private const string Replica = SystemContract.Catalog + "-2";

    private static CancellationToken Cancel => TestContext.Current.CancellationToken;

    [Fact]
    public async Task The_freeze_command_the_product_lists_p99_under_each_rung_and_a_hedged_trace()
    {
        var folder = DashboardPage.ScreenshotFolder("the pictures of docs/pitfalls/Frontend.Replicas.md");
        await using var system = new AppHostFixture(AppHostFixture.SmallCatalog, "--AppHost:FaultSeconds=40");
        await system.InitializeAsync();
        await using var browser = await Chromium.LaunchAsync();
        var page = await DashboardPage.LogInAsync(browser, system);

        // catalog-2's command menu, with the fault commands.
        await DashboardPage.OpenCommandsAsync(page, Replica);
        await page.ScreenshotAsync(new() { Path = Path.Combine(folder, "replicas-command-menu.png") });
        await page.Keyboard.PressAsync("Escape");

        var report = new List<string>();
        foreach (var rung in new[] { PerfMode.Naive, PerfMode.Optimized })
        {
            var flip = await system.Commands.ExecuteCommandAsync(SystemContract.Frontend, $"{Pitfalls.FrontendReplicas}-{rung}", Cancel);
            Assert.True(flip.Success, flip.Message);
            await Http.GetUntilServedAsync(system.Gateway, "/api/products", $"{Pitfalls.FrontendReplicas}={rung}");
            var load = new SteadyLoad();
            var running = load.RunAsync(system.Gateway, ["/api/products"], perSecond: 2, TimeSpan.FromSeconds(60), Cancel);
            await Task.Delay(TimeSpan.FromSeconds(10), Cancel);
            var frozenAt = load.Now;
            var freeze = await system.Commands.ExecuteCommandAsync(Replica, "freeze-60s", Cancel);
            Assert.True(freeze.Success, freeze.Message);
            await running;
            report.Add($"{rung}: {load.Summary(frozenAt)}");
        }

        File.WriteAllLines(Path.Combine(folder, "replicas-run.txt"), report);

        // The frontend's request duration over both runs: the P99 line past 20 s under naive, flat under optimized.
        await page.GotoAsync(new Uri(system.Dashboard, "/metrics/resource/frontend?meter=Microsoft.AspNetCore.Hosting&instrument=http.server.request.duration&duration=5&view=Graph").ToString());
        await page.WaitForTimeoutAsync(6_000);
        await page.ScreenshotAsync(new() { Path = Path.Combine(folder, "replicas-p99.png") });

        // A product list whose Catalog call was hedged: the first attempt cancelled, the hedge answered.
        var traceId = await DashboardPage.TraceWithSpanAsync(system, SystemContract.Frontend, "catalog attempt 2 (hedge)", Cancel);
        await page.GotoAsync(new Uri(system.Dashboard, $"/traces/detail/{traceId}").ToString());
        await Assertions.Expect(page.GetByText("catalog attempt 2 (hedge)").First).ToBeVisibleAsync();
        await page.WaitForTimeoutAsync(2_000);
        await page.ScreenshotAsync(new() { Path = Path.Combine(folder, "replicas-hedged-trace.png") });
    }
}
