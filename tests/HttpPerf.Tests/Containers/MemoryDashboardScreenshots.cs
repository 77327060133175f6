using System.Diagnostics;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.ServiceDefaults;
using HttpPerf.Tests.AppHost;
using HttpPerf.Tests.Infrastructure;
using Microsoft.Playwright;

namespace HttpPerf.Tests.Containers;

/// <summary>
/// Remakes docs/memory.md's pictures, "Watching a replica run out of memory", when asked (about five minutes):
/// <c>ASPIRE_DASHBOARD_SCREENSHOTS=docs/dashboard dotnet test HttpPerf.slnx --filter MemoryDashboardScreenshots</c>.
/// Container mode at the default catalog size, every replica under its limit; Chromium as a person: ▶ on the loadgen
/// row; on Metrics, <c>frontend-1</c>, meter HttpPerf, <c>httpperf.memory.utilization</c>, Last 5 minutes; in a second tab,
/// frontend-1's ⋯ → Commands → Frontend.CatalogClient: naive; a minute later the chart, then the structured logs
/// filtered on "Out of memory"; back to optimized, and the chart a minute after. Each product list refused is checked
/// through the Gateway too: 503, the problem's title.
/// </summary>
[Collection(Lanes.Orchestrated)]
[Trait(Kind.Name, Kind.Containers)]
public sealed class MemoryDashboardScreenshots
{
    [Fact]
    public async Task Watching_a_replica_run_out_of_memory_and_come_back()
    {
        await using var run = await OptInRun.DashboardPicturesAsync("docs/memory.md's pictures of a replica out of memory", new ContainerDashboardScreenshots.DefaultCatalog());

        await DashboardPage.StartLoadGenAsync(run.Page);

        // Metrics: frontend-1 (one replica: the service's chart adds its replicas up), its memory as a share of its
        // limit, the last five minutes.
        await DashboardPage.PickChartAsync(run.Page, @"^\s*frontend-1\b", "httpperf.memory.utilization", "Last 5 minutes");
        await run.Page.WaitForTimeoutAsync(60_000);

        // The flip from frontend-1's menu, in a second tab; the chart a minute later.
        var tab = await run.LogInAsync();
        await DashboardPage.RunCommandAsync(tab, SystemContract.Frontend + "-1", $"{Pitfalls.FrontendCatalogClient}: {PerfMode.Naive}");
        var flipped = Stopwatch.StartNew();
        await Task.Delay(TimeSpan.FromSeconds(2), Cancel);
        using (var refused = await run.AppHost.Gateway.GetAsync("/api/products", Cancel))
        {
            var body = await refused.Content.ReadAsStringAsync(Cancel);
            Assert.True((int)refused.StatusCode == 503 && body.Contains("Out of memory", StringComparison.Ordinal), $"{(int)refused.StatusCode}: {body[..Math.Min(300, body.Length)]}");
        }

        await Poll.UntilElapsedAsync(flipped, TimeSpan.FromSeconds(60));
        await run.ShootAsync(run.Page, "memory-naive.png");

        // Structured logs, filtered on the one line each refusal writes.
        await DashboardPage.FilterLogsAsync(tab, SystemContract.Frontend, "Out of memory");
        await run.ShootAsync(tab, "memory-logs.png");

        // Back to optimized: the chart a minute later.
        await DashboardPage.OpenResourcesAsync(tab);
        await Assertions.Expect(DashboardPage.Row(tab, SystemContract.Frontend + "-1")).ToBeVisibleAsync();
        await DashboardPage.RunCommandAsync(tab, SystemContract.Frontend + "-1", $"{Pitfalls.FrontendCatalogClient}: {PerfMode.Optimized}");
        var back = Stopwatch.StartNew();
        await Poll.UntilElapsedAsync(back, TimeSpan.FromSeconds(60));
        Assert.Equal(200, (await Http.GetAsync(run.AppHost.Gateway, "/api/products")).Status);
        await run.ShootAsync(run.Page, "memory-back.png");
    }
}
