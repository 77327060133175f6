using System.Globalization;
using System.Net.Http.Json;

/// <summary>
/// Dashboard buttons on the LoadGen resource that change its arrival rate, and whether it follows the flags
/// file or runs A/B, while it runs, through its control endpoint (<c>PUT /rate</c>, <c>PUT /mode</c>); and
/// "A/B: measure now", which answers in the dashboard with a table (<c>POST /measure</c>).
/// </summary>
internal static class LoadGenCommands
{
    private static readonly double[] Rates = [1, 5, 20];

    public static IResourceBuilder<T> WithRateCommands<T>(this IResourceBuilder<T> loadGen)
        where T : IResourceWithEndpoints
    {
        foreach (var rate in Rates)
        {
            loadGen.WithCommand(
                name: $"rate-{rate.ToString(CultureInfo.InvariantCulture)}",
                displayName: $"Rate: {rate.ToString(CultureInfo.InvariantCulture)}/s",
                executeCommand: context => PutAsync(loadGen, "/rate", rate, context.CancellationToken),
                commandOptions: Options($"Start {rate.ToString(CultureInfo.InvariantCulture)} requests a second from now on.", "TopSpeed"));
        }

        return loadGen;
    }

    /// <summary>"Load: follow flags" (no mode header: what the flags file says serves) and "Load: A/B" (naive and optimized by header, alternating).</summary>
    public static IResourceBuilder<T> WithModeCommands<T>(this IResourceBuilder<T> loadGen)
        where T : IResourceWithEndpoints
    {
        loadGen.WithCommand(
            name: "mode-flags",
            displayName: "Load: follow flags",
            executeCommand: context => PutAsync(loadGen, "/mode", "flags", context.CancellationToken),
            commandOptions: Options("Send no X-Perf-Mode header: every hop serves what the flags file says, so a flag flip shows in the charts.", "Flag"));
        loadGen.WithCommand(
            name: "mode-ab",
            displayName: "Load: A/B",
            executeCommand: context => PutAsync(loadGen, "/mode", "both", context.CancellationToken),
            commandOptions: Options("Alternate naive and optimized by X-Perf-Mode header, whatever the flags say: both measured under the same load.", "ArrowSwap"));
        return loadGen;
    }

    /// <summary>
    /// "A/B: measure now": a short run beside the live load (which goes on), one request at a time, naive and
    /// optimized alternating by header on every route, at most 12 s a route and under a minute in all; the dashboard
    /// shows its Markdown table at once: p50, p99 and MB/s of each mode, the ratios with their halves, and the requests
    /// each rests on. LoadGen
    /// refuses, and the command fails with its reason, while the Gateway is not healthy.
    /// </summary>
    public static IResourceBuilder<T> WithMeasureCommand<T>(this IResourceBuilder<T> loadGen)
        where T : IResourceWithEndpoints
    {
        loadGen.WithCommand(
            name: "measure-ab",
            displayName: "A/B: measure now",
            executeCommand: context => MeasureAsync(loadGen, context.CancellationToken),
            commandOptions: Options("Measure naive against optimized now, by header, on every route, beside the live load (under a minute); answers with a table.", "DataBarVertical"));
        return loadGen;
    }

    // LoadGen cancels what is still in flight at 55 s (AbMeasurement.HardLimit) and answers.
    private static readonly TimeSpan AbMeasurementTimeout = TimeSpan.FromSeconds(65);

    private static async Task<ExecuteCommandResult> MeasureAsync<T>(IResourceBuilder<T> loadGen, CancellationToken cancellationToken)
        where T : IResourceWithEndpoints
    {
        using var request = new HttpRequestMessage(HttpMethod.Post, "/measure");
        return await ControlRequests.SendAsync(loadGen.GetEndpoint("control"), "LoadGen", request, cancellationToken,
            onSuccess: table => CommandResults.Success("Naive and optimized measured side by side.", table, CommandResultFormat.Markdown, displayImmediately: true),
            timeout: AbMeasurementTimeout);
    }

    private static CommandOptions Options(string description, string icon) => new()
    {
        Description = description,
        IconName = icon,
        UpdateState = ControlRequests.EnabledWhileRunning,
    };

    private static async Task<ExecuteCommandResult> PutAsync<T, TValue>(IResourceBuilder<T> loadGen, string path, TValue value, CancellationToken cancellationToken)
        where T : IResourceWithEndpoints
    {
        using var request = new HttpRequestMessage(HttpMethod.Put, path) { Content = JsonContent.Create(value) };
        return await ControlRequests.SendAsync(loadGen.GetEndpoint("control"), "LoadGen", request, cancellationToken);
    }
}
