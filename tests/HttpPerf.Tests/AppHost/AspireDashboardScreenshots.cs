using System.Diagnostics;
using Aspire.Hosting.ApplicationModel;
using Aspire.Hosting;
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
[Trait(Kind.Name, Kind.AppHost)]
public sealed class AspireDashboardScreenshots
{
    private static CancellationToken Cancel => TestContext.Current.CancellationToken;

    [Fact]
    public async Task The_resources_a_command_menu_the_catalog_chart_a_trace_and_the_AB_answer()
    {
        var folder = DashboardPage.ScreenshotFolder("docs/dashboard.md's pictures of the Aspire dashboard");
        var system = new AppHostFixture(productCount: null);
        try
        {
            await system.InitializeAsync();
            await using var browser = await Chromium.LaunchAsync();
            var page = await DashboardPage.LogInAsync(browser, system);

            // LoadGen, started from its row; a minute of load that follows the flags, all optimized.
            await DashboardPage.Row(page, SystemContract.LoadGen).GetByRole(AriaRole.Button, new() { Name = "Start resource" }).ClickAsync();
            await WaitForStateAsync(system, SystemContract.LoadGen, KnownResourceStates.Running);
            await Task.Delay(TimeSpan.FromSeconds(60), Cancel);
            // After that minute: LoadGen's line (the text of its /status link) says what it has sent.
            await page.GotoAsync(system.Dashboard.ToString());
            await page.WaitForTimeoutAsync(3_000);
            await page.ScreenshotAsync(new() { Path = Path.Combine(folder, "aspire-resources.png") });

            // The catalog's command menu: "⋯", then Commands.
            await DashboardPage.OpenCommandsAsync(page, SystemContract.Catalog);
            await page.ScreenshotAsync(new() { Path = Path.Combine(folder, "aspire-command-menu.png") });
            await page.Keyboard.PressAsync("Escape");

            // The flip as README's "Watching a flag flip" has it: the catalog's chart open over the last minute (a point
            // every 2 s), the command run from elsewhere (a second tab: here, the way the dashboard runs it), and the
            // chart shot every 2 s from the flip on, each picture named by its second, to read when a person sees it.
            await page.GotoAsync(new Uri(system.Dashboard, "/metrics/resource/catalog?meter=Microsoft.AspNetCore.Hosting&instrument=http.server.request.duration&duration=1&view=Graph").ToString());
            await page.WaitForTimeoutAsync(8_000);
            var timing = Directory.CreateDirectory(Path.Combine(folder, "flip-timing")).FullName;
            var flipped = Stopwatch.StartNew();
            var flip = await system.Commands.ExecuteCommandAsync(SystemContract.Catalog, $"{Pitfalls.CatalogSerialization}-{PerfMode.Naive}", Cancel);
            Assert.True(flip.Success, flip.Message);
            for (var second = 0; second <= 20; second += 2)
            {
                var wait = TimeSpan.FromSeconds(second) - flipped.Elapsed;
                if (wait > TimeSpan.Zero)
                {
                    await Task.Delay(wait, Cancel);
                }

                // The chart alone: its title, the graph and its legend.
                await page.ScreenshotAsync(new() { Path = Path.Combine(timing, $"flip-{second:00}s.png"), Clip = new() { X = 400, Y = 100, Width = 660, Height = 600 } });
            }

            var served = await Http.GetUntilServedAsync(system.Gateway, "/api/catalog/products", $"{Pitfalls.CatalogSerialization}={PerfMode.Naive}");
            Assert.Contains($"{Pitfalls.CatalogSerialization}={PerfMode.Naive}", served, StringComparison.Ordinal);
            await Task.Delay(TimeSpan.FromSeconds(20), Cancel);

            // The catalog's request duration over the flip, the last 5 minutes (a point every 10 s).
            await page.GotoAsync(new Uri(system.Dashboard, "/metrics/resource/catalog?meter=Microsoft.AspNetCore.Hosting&instrument=http.server.request.duration&duration=5&view=Graph").ToString());
            await page.WaitForTimeoutAsync(5_000);
            await page.ScreenshotAsync(new() { Path = Path.Combine(folder, "aspire-catalog-chart.png") });

            // The audit record of the flip, in the Gateway's structured logs.
            await page.GotoAsync(new Uri(system.Dashboard, "/structuredlogs/resource/gateway").ToString());
            await page.WaitForTimeoutAsync(2_000);
            await page.GetByPlaceholder("Filter", new() { Exact = false }).First.ClickAsync();
            await page.Keyboard.TypeAsync("changed from");
            await page.WaitForTimeoutAsync(2_000);
            await page.ScreenshotAsync(new() { Path = Path.Combine(folder, "aspire-audit.png") });

            // A product list's trace: LoadGen's span for the whole request, the hops under it.
            var traceId = await DashboardPage.TraceWithSpanAsync(system, SystemContract.LoadGen, "products GET /api/products", Cancel);
            await page.GotoAsync(new Uri(system.Dashboard, $"/traces/detail/{traceId}").ToString());
            await Assertions.Expect(page.GetByText("products GET /api/products").First).ToBeVisibleAsync();
            await page.WaitForTimeoutAsync(2_000);
            await page.ScreenshotAsync(new() { Path = Path.Combine(folder, "aspire-trace.png") });

            // "A/B: measure now", from LoadGen's menu: the answer opens at once.
            await page.GotoAsync(system.Dashboard.ToString());
            await DashboardPage.OpenCommandsAsync(page, SystemContract.LoadGen);
            await page.Locator("[role=menuitem]:visible").Filter(new() { HasText = "A/B: measure now" }).Last.ClickAsync();
            await Assertions.Expect(page.GetByText("p50 optimized / naive").First).ToBeVisibleAsync(new() { Timeout = 70_000 });
            await page.WaitForTimeoutAsync(1_000);
            await page.ScreenshotAsync(new() { Path = Path.Combine(folder, "aspire-ab.png") });
        }
        finally
        {
            await system.Commands.ExecuteCommandAsync(SystemContract.Gateway, $"all-flags-{PerfMode.Optimized}", Cancel);
            await system.DisposeAsync();
        }
    }

    private static async Task WaitForStateAsync(AppHostFixture system, string resource, string state)
    {
        using var timeout = new CancellationTokenSource(TimeSpan.FromMinutes(2));
        await system.App.ResourceNotifications.WaitForResourceAsync(resource, state, timeout.Token);
    }
}
