using System.Diagnostics;
using System.Text.RegularExpressions;
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
[Trait(Kind.Name, Kind.Containers)]
public sealed class MemoryDashboardScreenshots
{
    private const string Replica = SystemContract.Frontend + "-1";

    private static CancellationToken Cancel => TestContext.Current.CancellationToken;

    [Fact]
    public async Task Watching_a_replica_run_out_of_memory_and_come_back()
    {
        var folder = DashboardPage.ScreenshotFolder("docs/memory.md's pictures of a replica out of memory");
        var system = new ContainerDashboardScreenshots.DefaultCatalog();
        Assert.SkipWhen(system.Unavailable is not null, system.Unavailable ?? "");
        try
        {
            await system.InitializeAsync();
            await using var browser = await Chromium.LaunchAsync();
            var page = await DashboardPage.LogInAsync(browser, system.Dashboard, system.BrowserToken);

            var loadgen = DashboardPage.Row(page, SystemContract.LoadGen);
            await loadgen.GetByRole(AriaRole.Button, new() { Name = "Start resource" }).ClickAsync();
            await Assertions.Expect(loadgen).ToContainTextAsync(new Regex(@"LoadGen: 1/s, flags, [\d,]+ requests"), new() { Timeout = 90_000 });

            // Metrics: frontend-1 (one replica: the service's chart adds its replicas up), its memory as a share of its
            // limit, the last five minutes.
            await page.GetByRole(AriaRole.Link, new() { Name = "Metrics" }).First.ClickAsync();
            await ContainerDashboardScreenshots.SelectAsync(page, "(None)", new Regex(@"^\s*frontend-1\b"));
            await page.Locator("fluent-tree-item[title='httpperf.memory.utilization']").First.ClickAsync();
            await ContainerDashboardScreenshots.SelectAsync(page, "Last 5 minutes", new Regex("Last 5 minutes"));
            await page.WaitForTimeoutAsync(60_000);

            // The flip from frontend-1's menu, in a second tab; the chart a minute later.
            var tab = await DashboardPage.LogInAsync(browser, system.Dashboard, system.BrowserToken);
            await DashboardPage.OpenCommandsAsync(tab, Replica);
            await tab.Locator("[role=menuitem]:visible").Filter(new() { HasText = $"{Pitfalls.FrontendCatalogClient}: {PerfMode.Naive}" }).Last.ClickAsync();
            var flipped = Stopwatch.StartNew();
            await Task.Delay(TimeSpan.FromSeconds(2), Cancel);
            using (var refused = await system.Gateway.GetAsync("/api/products", Cancel))
            {
                var body = await refused.Content.ReadAsStringAsync(Cancel);
                Assert.True((int)refused.StatusCode == 503 && body.Contains("Out of memory", StringComparison.Ordinal), $"{(int)refused.StatusCode}: {body[..Math.Min(300, body.Length)]}");
            }

            await ContainerDashboardScreenshots.DelayUntil(flipped, TimeSpan.FromSeconds(60));
            await page.ScreenshotAsync(new() { Path = Path.Combine(folder, "memory-naive.png") });

            // Structured logs, filtered on the one line each refusal writes.
            await tab.GotoAsync(new Uri(system.Dashboard, "/structuredlogs/resource/frontend").ToString());
            await tab.WaitForTimeoutAsync(2_000);
            await tab.GetByPlaceholder("Filter", new() { Exact = false }).First.ClickAsync();
            await tab.Keyboard.TypeAsync("Out of memory");
            await tab.WaitForTimeoutAsync(3_000);
            await tab.ScreenshotAsync(new() { Path = Path.Combine(folder, "memory-logs.png") });

            // Back to optimized: the chart a minute later.
            await tab.GotoAsync(system.Dashboard.ToString());
            await Assertions.Expect(DashboardPage.Row(tab, Replica)).ToBeVisibleAsync();
            await DashboardPage.OpenCommandsAsync(tab, Replica);
            await tab.Locator("[role=menuitem]:visible").Filter(new() { HasText = $"{Pitfalls.FrontendCatalogClient}: {PerfMode.Optimized}" }).Last.ClickAsync();
            var back = Stopwatch.StartNew();
            await ContainerDashboardScreenshots.DelayUntil(back, TimeSpan.FromSeconds(60));
            Assert.Equal(200, (await Http.GetAsync(system.Gateway, "/api/products")).Status);
            await page.ScreenshotAsync(new() { Path = Path.Combine(folder, "memory-back.png") });
        }
        finally
        {
            await system.Commands.ExecuteCommandAsync(SystemContract.Gateway, $"all-flags-{PerfMode.Optimized}", Cancel);
            await system.DisposeAsync();
        }
    }
}
