using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.Tests.Infrastructure;

namespace HttpPerf.Tests.AppHost;

/// <summary>
/// Remakes the pictures of docs/pitfalls/Frontend.Replicas.md from the real Aspire dashboard, when asked (about four
/// minutes): <c>ASPIRE_DASHBOARD_SCREENSHOTS=docs/dashboard dotnet test HttpPerf.slnx --filter ReplicaDashboardScreenshots</c>.
/// The AppHost runs with a 2,000-product catalog; product lists go through the Gateway at 2 a second, following the
/// flags; catalog-2 is frozen from its command menu for 40 s, once with Frontend.Replicas naive and once optimized;
/// then the frontend's request duration over both, and the trace of a hedged product list.
/// </summary>
[Collection(Lanes.Orchestrated)]
[Trait(Kind.Name, Kind.AppHost)]
public sealed class ReplicaDashboardScreenshots
{
    private const string Replica = SystemContract.Catalog + "-2";

    private static CancellationToken Cancel => TestContext.Current.CancellationToken;

    [Fact]
    public async Task The_freeze_command_the_product_lists_p99_under_each_rung_and_a_hedged_trace()
    {
        await using var run = OptInRun.ForDashboardPictures("the pictures of docs/pitfalls/Frontend.Replicas.md");
        var (system, page) = await run.StartAndLogInAsync(new AppHostFixture(AppHostFixture.SmallCatalog, "--AppHost:FaultSeconds=40"));

        // catalog-2's command menu, with the fault commands.
        await DashboardPage.OpenCommandsAsync(page, Replica);
        await run.ShootAsync(page, "replicas-command-menu.png");
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

        File.WriteAllLines(Path.Combine(run.Folder, "replicas-run.txt"), report);

        // The frontend's request duration over both runs: the P99 line past 20 s under naive, flat under optimized.
        await DashboardPage.OpenChartAsync(page, SystemContract.Frontend, "http.server.request.duration", minutes: 5);
        await page.WaitForTimeoutAsync(6_000);
        await run.ShootAsync(page, "replicas-p99.png");

        // A product list whose Catalog call was hedged: the first attempt cancelled, the hedge answered.
        var traceId = await DashboardPage.TraceWithSpanAsync(system, SystemContract.Frontend, "catalog attempt 2 (hedge)", Cancel);
        await DashboardPage.OpenTraceAsync(page, traceId, "catalog attempt 2 (hedge)");
        await run.ShootAsync(page, "replicas-hedged-trace.png");
    }
}
