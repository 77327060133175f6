using System.Diagnostics;
using System.Text.RegularExpressions;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.ServiceDefaults;
using HttpPerf.Tests.AppHost;
using HttpPerf.Tests.Infrastructure;
using Microsoft.Playwright;

namespace HttpPerf.Tests.Containers;

/// <summary>
/// Remakes docs/deploy.md's pictures of the dashboard in container mode, when asked (about five minutes):
/// <c>ASPIRE_DASHBOARD_SCREENSHOTS=docs/dashboard dotnet test HttpPerf.slnx --filter ContainerDashboardScreenshots</c>.
/// Container mode at the default catalog size, and Chromium following README's "Watching a flag flip" as a person
/// does: ▶ on the loadgen row; on Metrics, <c>catalog</c>, <c>http.server.request.duration</c> and Last 1 minute;
/// in a second tab, catalog-2's ⋯ → Commands → Catalog.Serialization: naive. The chart, left open in the first tab,
/// is shot every 2 s for 20 s from the flip (container-flip-timing/), then with the step in it.
/// </summary>
[Trait(Kind.Name, Kind.Containers)]
public sealed class ContainerDashboardScreenshots
{
    private const string Replica = SystemContract.Catalog + "-2";

    private static CancellationToken Cancel => TestContext.Current.CancellationToken;

    [Fact]
    public async Task README_s_flag_flip_from_a_replica_s_menu_on_the_catalog_chart()
    {
        var folder = DashboardPage.ScreenshotFolder("docs/deploy.md's pictures of the dashboard in container mode");
        var system = new DefaultCatalog();
        Assert.SkipWhen(system.Unavailable is not null, system.Unavailable ?? "");
        try
        {
            await system.InitializeAsync();
            await using var browser = await Chromium.LaunchAsync();
            var page = await DashboardPage.LogInAsync(browser, system.Dashboard, system.BrowserToken);

            // 1. ▶ on the loadgen row; its URLs column says what it has sent.
            var loadgen = DashboardPage.Row(page, SystemContract.LoadGen);
            await loadgen.GetByRole(AriaRole.Button, new() { Name = "Start resource" }).ClickAsync();
            await Assertions.Expect(loadgen).ToContainTextAsync(new Regex(@"LoadGen: 1/s, flags, [\d,]+ requests, 0 errors"), new() { Timeout = 90_000 });
            await Task.Delay(TimeSpan.FromSeconds(45), Cancel);
            await page.ScreenshotAsync(new() { Path = Path.Combine(folder, "container-resources.png") });

            // 2. Metrics: catalog (every replica in one chart), its request duration, the last minute.
            await page.GetByRole(AriaRole.Link, new() { Name = "Metrics" }).First.ClickAsync();
            await SelectAsync(page, "(None)", new Regex(@"^\s*catalog \(application\)\s*$"));
            await page.Locator("fluent-tree-item[title='http.server.request.duration']").First.ClickAsync();
            await SelectAsync(page, "Last 5 minutes", new Regex("Last 1 minute"));
            await page.WaitForTimeoutAsync(8_000);

            // 3. In a second tab, the flip from a replica's menu; the first tab's chart shot every 2 s from it.
            var tab = await DashboardPage.LogInAsync(browser, system.Dashboard, system.BrowserToken);
            await DashboardPage.OpenCommandsAsync(tab, Replica);
            await tab.Locator("[role=menuitem]:visible").Filter(new() { HasText = $"{Pitfalls.CatalogSerialization}: {PerfMode.Naive}" }).Last.ClickAsync();
            var flipped = Stopwatch.StartNew();
            var timing = Directory.CreateDirectory(Path.Combine(folder, "container-flip-timing")).FullName;
            for (var second = 0; second <= 20; second += 2)
            {
                await DelayUntil(flipped, TimeSpan.FromSeconds(second));
                await page.ScreenshotAsync(new() { Path = Path.Combine(timing, $"flip-{second:00}s.png"), Clip = new() { X = 400, Y = 100, Width = 660, Height = 600 } });
            }

            var served = await Http.GetUntilServedAsync(system.Gateway, "/api/catalog/products", $"{Pitfalls.CatalogSerialization}={PerfMode.Naive}");
            Assert.Contains($"{Pitfalls.CatalogSerialization}={PerfMode.Naive}", served, StringComparison.Ordinal);
            await DelayUntil(flipped, TimeSpan.FromSeconds(40));
            await page.ScreenshotAsync(new() { Path = Path.Combine(folder, "container-catalog-flip.png") });
        }
        finally
        {
            await system.Commands.ExecuteCommandAsync(SystemContract.Gateway, $"all-flags-{PerfMode.Optimized}", Cancel);
            await system.DisposeAsync();
        }
    }

    // A dashboard select (Resource, Duration), found by what it shows, and one of its options.
    internal static async Task SelectAsync(IPage page, string shown, Regex option)
    {
        await page.GetByRole(AriaRole.Combobox).Filter(new() { HasText = shown }).First.ClickAsync();
        await page.Locator("fluent-option:visible").Filter(new() { HasTextRegex = option }).First.ClickAsync();
        await page.WaitForTimeoutAsync(1_500);
    }

    internal static async Task DelayUntil(Stopwatch clock, TimeSpan at)
    {
        if (at - clock.Elapsed is { } wait && wait > TimeSpan.Zero)
        {
            await Task.Delay(wait, Cancel);
        }
    }

    /// <summary>Container mode at the AppHost's default catalog size, as a person's run has it.</summary>
    internal sealed class DefaultCatalog : ContainerModeFixture
    {
        protected override int? ProductCount => null;
    }
}
