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
    [Fact]
    public async Task The_freeze_command_the_product_lists_p99_under_each_rung_and_a_hedged_trace()
    {
        await using var run = await OptInRun.DashboardPicturesAsync("the pictures of docs/pitfalls/Frontend.Replicas.md", new AppHostFixture(AppHostFixture.SmallCatalog, "--AppHost:FaultSeconds=40"));

        // catalog-2's command menu, with the fault commands.
        await DashboardPage.OpenCommandsAsync(run.Page, SystemContract.Catalog + "-2");
        await run.ShootAsync(run.Page, "replicas-command-menu.png");
        await run.Page.Keyboard.PressAsync("Escape");

        var report = new List<string>();
        foreach (var rung in new[] { PerfMode.Naive, PerfMode.Optimized })
        {
            var flip = await run.AppHost.Commands.ExecuteCommandAsync(SystemContract.Frontend, $"{Pitfalls.FrontendReplicas}-{rung}", Cancel);
            Assert.True(flip.Success, flip.Message);
            await Http.GetUntilServedAsync(run.AppHost.Gateway, "/api/products", $"{Pitfalls.FrontendReplicas}={rung}");
            var load = new SteadyLoad();
            var running = load.RunAsync(run.AppHost.Gateway, ["/api/products"], perSecond: 2, TimeSpan.FromSeconds(60), Cancel);
            await Task.Delay(TimeSpan.FromSeconds(10), Cancel);
            var frozenAt = load.Now;
            var freeze = await run.AppHost.Commands.ExecuteCommandAsync(SystemContract.Catalog + "-2", "freeze-60s", Cancel);
            Assert.True(freeze.Success, freeze.Message);
            await running;
            report.Add($"{rung}: {load.Summary(frozenAt)}");
        }

        File.WriteAllLines(Path.Combine(run.Folder, "replicas-run.txt"), report);

        // The frontend's request duration over both runs: the P99 line past 20 s under naive, flat under optimized.
        await DashboardPage.OpenChartAsync(run.Page, SystemContract.Frontend, "http.server.request.duration", minutes: 5);
        await run.Page.WaitForTimeoutAsync(6_000);
        await run.ShootAsync(run.Page, "replicas-p99.png");

        // A product list whose Catalog call was hedged: the first attempt cancelled, the hedge answered.
        var traceId = await DashboardPage.TraceWithSpanAsync(run.AppHost, SystemContract.Frontend, "catalog attempt 2 (hedge)", Cancel);
        await DashboardPage.OpenTraceAsync(run.Page, traceId, "catalog attempt 2 (hedge)");
        await run.ShootAsync(run.Page, "replicas-hedged-trace.png");
    }
}
