using System.Diagnostics;
using Microsoft.Playwright;

namespace HttpPerf.Tests.AppHost;

/// <summary>What the screenshot runs do on the Aspire dashboard: find a resource's row, open its commands, find a trace.</summary>
internal static class DashboardPage
{
    /// <summary>The folder <c>ASPIRE_DASHBOARD_SCREENSHOTS</c> names (made if missing), or the test skips, saying <paramref name="remakes"/>.</summary>
    public static string ScreenshotFolder(string remakes)
    {
        var folder = Environment.GetEnvironmentVariable("ASPIRE_DASHBOARD_SCREENSHOTS");
        if (string.IsNullOrEmpty(folder))
        {
            Assert.Skip($"Set ASPIRE_DASHBOARD_SCREENSHOTS to a folder to remake {remakes}.");
        }

        return Directory.CreateDirectory(Path.GetFullPath(folder, Bench.LocalSystem.LocalSystem.RepositoryRoot())).FullName;
    }

    /// <summary>A 1500x950 page logged in with the token, as a person does with the URL the AppHost prints, the resources listed.</summary>
    public static Task<IPage> LogInAsync(HttpPerf.Tests.Infrastructure.Chromium.BrowserSession browser, AppHostFixture system) =>
        LogInAsync(browser, system.Dashboard, system.BrowserToken);

    /// <summary><see cref="LogInAsync(HttpPerf.Tests.Infrastructure.Chromium.BrowserSession, AppHostFixture)"/> on any AppHost's dashboard.</summary>
    public static async Task<IPage> LogInAsync(HttpPerf.Tests.Infrastructure.Chromium.BrowserSession browser, Uri dashboard, string browserToken)
    {
        var page = await browser.NewPageAsync();
        await page.SetViewportSizeAsync(1500, 950);
        await page.GotoAsync(new Uri(dashboard, $"/login?t={browserToken}").ToString());
        await Assertions.Expect(page.GetByRole(AriaRole.Row).Filter(new() { HasText = HttpPerf.ServiceDefaults.Contract.SystemContract.Gateway })).ToBeVisibleAsync();
        return page;
    }

    public static ILocator Row(IPage page, string resource) =>
        page.GetByRole(AriaRole.Row).Filter(new() { Has = page.GetByText(resource, new() { Exact = true }) }).First;

    /// <summary>The resource's "⋯" menu, then Commands.</summary>
    public static async Task OpenCommandsAsync(IPage page, string resource)
    {
        await Row(page, resource).GetByRole(AriaRole.Button, new() { Name = "Actions" }).ClickAsync();
        await page.Locator("[role=menuitem]:visible").Filter(new() { HasText = "Commands" }).First.HoverAsync();
        await page.WaitForTimeoutAsync(700);
    }

    /// <summary>The newest trace with a span named <paramref name="span"/> from <paramref name="resource"/>, found through the dashboard's telemetry API.</summary>
    public static async Task<string> TraceWithSpanAsync(AppHostFixture system, string resource, string span, CancellationToken cancellationToken)
    {
        using var dashboard = new HttpClient { BaseAddress = system.Dashboard };
        dashboard.DefaultRequestHeaders.Add("x-api-key", system.DashboardApiKey);
        var clock = Stopwatch.StartNew();
        while (clock.Elapsed < TimeSpan.FromSeconds(30))
        {
            var spans = await DashboardSpans.GetAsync(dashboard, traceId: null, cancellationToken, resourceName: resource);
            if (spans.LastOrDefault(s => s.Name == span) is { } found)
            {
                return found.TraceId;
            }

            await Task.Delay(1_000, cancellationToken);
        }

        throw new TimeoutException($"No '{span}' span of {resource} reached the dashboard in 30 s.");
    }
}
