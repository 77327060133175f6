using System.Diagnostics;
using Microsoft.Playwright;

namespace HttpPerf.Tests.AppHost;

/// <summary>What the screenshot runs do on the Aspire dashboard: find a resource's row, open its commands, find a trace.</summary>
internal static class DashboardPage
{
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
