using System.Diagnostics;
using System.Text.RegularExpressions;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.Tests.Infrastructure;
using Microsoft.Playwright;

namespace HttpPerf.Tests.AppHost;

/// <summary>
/// What the screenshot runs do on a page of the Aspire dashboard, as a person does it: find a resource's row, start
/// LoadGen, run a resource's commands, pick or open a chart, open the structured logs or a trace; find a trace.
/// </summary>
internal static class DashboardPage
{
    public static ILocator Row(IPage page, string resource) =>
        page.GetByRole(AriaRole.Row).Filter(new() { Has = page.GetByText(resource, new() { Exact = true }) }).First;

    /// <summary>
    /// ▶ on LoadGen's row, then until its line (the text of its /status link) says what it has sent: "LoadGen: 1/s,
    /// flags, N requests" and <paramref name="then"/>.
    /// </summary>
    public static async Task StartLoadGenAsync(IPage page, string then = "")
    {
        var row = Row(page, SystemContract.LoadGen);
        await row.GetByRole(AriaRole.Button, new() { Name = "Start resource" }).ClickAsync();
        await Assertions.Expect(row).ToContainTextAsync(new Regex(@"LoadGen: 1/s, flags, [\d,]+ requests" + Regex.Escape(then)), new() { Timeout = 90_000 });
    }

    /// <summary>The resource's "⋯" menu, then Commands.</summary>
    public static async Task OpenCommandsAsync(IPage page, string resource)
    {
        await Row(page, resource).GetByRole(AriaRole.Button, new() { Name = "Actions" }).ClickAsync();
        await page.Locator("[role=menuitem]:visible").Filter(new() { HasText = "Commands" }).First.HoverAsync();
        await page.WaitForTimeoutAsync(700);
    }

    /// <summary>The resource's "⋯" menu, Commands, and the command whose name shows <paramref name="command"/>.</summary>
    public static async Task RunCommandAsync(IPage page, string resource, string command)
    {
        await OpenCommandsAsync(page, resource);
        await page.Locator("[role=menuitem]:visible").Filter(new() { HasText = command }).Last.ClickAsync();
    }

    /// <summary>
    /// A chart as a person picks it on Metrics: the resource whose option matches <paramref name="resource"/>, the
    /// instrument, and the duration whose option matches <paramref name="duration"/>.
    /// </summary>
    public static async Task PickChartAsync(IPage page, string resource, string instrument, string duration)
    {
        await page.GetByRole(AriaRole.Link, new() { Name = "Metrics" }).First.ClickAsync();
        await SelectAsync(page, "(None)", resource);
        await page.Locator($"fluent-tree-item[title='{instrument}']").First.ClickAsync();
        await SelectAsync(page, "Last 5 minutes", duration);
    }

    /// <summary>The resources, the dashboard's first page.</summary>
    public static Task OpenResourcesAsync(IPage page) => GoToAsync(page, "/");

    /// <summary>The resource's chart of an instrument over the last <paramref name="minutes"/> (a point every 2 s over one minute, every 10 s over five).</summary>
    public static Task OpenChartAsync(IPage page, string resource, string instrument, int minutes, string meter = "Microsoft.AspNetCore.Hosting") =>
        GoToAsync(page, $"/metrics/resource/{resource}?meter={meter}&instrument={instrument}&duration={minutes}&view=Graph");

    /// <summary>The resource's structured logs, filtered on <paramref name="text"/> typed in the Filter box.</summary>
    public static async Task FilterLogsAsync(IPage page, string resource, string text)
    {
        await GoToAsync(page, $"/structuredlogs/resource/{resource}");
        await page.WaitForTimeoutAsync(2_000);
        await page.GetByPlaceholder("Filter", new() { Exact = false }).First.ClickAsync();
        await page.Keyboard.TypeAsync(text);
        await page.WaitForTimeoutAsync(3_000);
    }

    /// <summary>The trace's page, once its span named <paramref name="span"/> shows.</summary>
    public static async Task OpenTraceAsync(IPage page, string traceId, string span)
    {
        await GoToAsync(page, $"/traces/detail/{traceId}");
        await Assertions.Expect(page.GetByText(span).First).ToBeVisibleAsync();
        await page.WaitForTimeoutAsync(2_000);
    }

    /// <summary>
    /// The chart alone (its title, the graph and its legend), shot every 2 s for 20 s from <paramref name="flipped"/> into
    /// <paramref name="folder"/> of the run's, each picture named by its second: when a person sees the flip.
    /// </summary>
    public static async Task ShootChartAfterFlipAsync(OptInRun run, IPage page, string folder, Stopwatch flipped)
    {
        for (var second = 0; second <= 20; second += 2)
        {
            await Poll.UntilElapsedAsync(flipped, TimeSpan.FromSeconds(second));
            await run.ShootAsync(page, Path.Combine(folder, $"flip-{second:00}s.png"), new() { X = 400, Y = 100, Width = 660, Height = 600 });
        }
    }

    /// <summary>The newest trace with a span named <paramref name="span"/> from <paramref name="resource"/>, found through the dashboard's telemetry API.</summary>
    public static async Task<string> TraceWithSpanAsync(AppHostUnderTest system, string resource, string span, CancellationToken cancellationToken)
    {
        using var dashboard = DashboardSpans.Client(system);
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

    // A dashboard select (Resource, Duration), found by what it shows, and the option that matches.
    private static async Task SelectAsync(IPage page, string shown, string option)
    {
        await page.GetByRole(AriaRole.Combobox).Filter(new() { HasText = shown }).First.ClickAsync();
        await page.Locator("fluent-option:visible").Filter(new() { HasTextRegex = new Regex(option) }).First.ClickAsync();
        await page.WaitForTimeoutAsync(1_500);
    }

    // The page is on the dashboard: a path of the same dashboard.
    private static Task GoToAsync(IPage page, string path) => page.GotoAsync(new Uri(new Uri(page.Url), path).ToString());
}
