using Aspire.Hosting.ApplicationModel;
using Aspire.Hosting;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.ServiceDefaults;
using HttpPerf.Tests.AppHost;
using HttpPerf.Tests.Infrastructure;

namespace HttpPerf.Tests.Containers;

/// <summary>
/// Remakes docs/deploy.md's pictures of the dashboard in container mode, when asked (about three minutes):
/// <c>ASPIRE_DASHBOARD_SCREENSHOTS=docs/dashboard dotnet test HttpPerf.slnx --filter ContainerDashboardScreenshots</c>.
/// The Resources page with each replicated service's containers under its row, and the catalog's request duration
/// in Metrics, every replica in one chart, across a flip made from the catalog row.
/// </summary>
[Trait(Kind.Name, Kind.Containers)]
public sealed class ContainerDashboardScreenshots
{
    private static CancellationToken Cancel => TestContext.Current.CancellationToken;

    [Fact]
    public async Task The_resources_and_the_catalog_chart_of_both_replicas_across_a_flip()
    {
        var folder = DashboardPage.ScreenshotFolder("docs/deploy.md's pictures of the dashboard in container mode");
        var system = new ContainerModeFixture();
        Assert.SkipWhen(system.Unavailable is not null, system.Unavailable ?? "");
        try
        {
            await system.InitializeAsync();
            await using var browser = await Chromium.LaunchAsync();
            var page = await DashboardPage.LogInAsync(browser, system.Dashboard, system.BrowserToken);

            await system.Commands.ExecuteCommandAsync(SystemContract.LoadGen, KnownResourceCommands.StartCommand, Cancel);
            await Task.Delay(TimeSpan.FromSeconds(45), Cancel);
            await page.GotoAsync(system.Dashboard.ToString());
            await page.WaitForTimeoutAsync(3_000);
            await page.ScreenshotAsync(new() { Path = Path.Combine(folder, "container-resources.png") });

            var flip = await system.Commands.ExecuteCommandAsync(SystemContract.Catalog, $"{Pitfalls.CatalogSerialization}-{PerfMode.Naive}", Cancel);
            Assert.True(flip.Success, flip.Message);
            await Task.Delay(TimeSpan.FromSeconds(40), Cancel);
            await page.GotoAsync(new Uri(system.Dashboard, "/metrics/resource/catalog?meter=Microsoft.AspNetCore.Hosting&instrument=http.server.request.duration&duration=5&view=Graph").ToString());
            await page.WaitForTimeoutAsync(5_000);
            await page.ScreenshotAsync(new() { Path = Path.Combine(folder, "container-catalog-chart.png") });
        }
        finally
        {
            await system.Commands.ExecuteCommandAsync(SystemContract.Gateway, $"all-flags-{PerfMode.Optimized}", Cancel);
            await system.DisposeAsync();
        }
    }
}
