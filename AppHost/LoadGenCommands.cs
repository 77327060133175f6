using System.Globalization;
using System.Net.Http.Json;

/// <summary>
/// Dashboard buttons on the LoadGen resource that change its arrival rate, and whether it follows the flags
/// file or runs A/B, while it runs, through its control endpoint (<c>PUT /rate</c>, <c>PUT /mode</c>).
/// </summary>
internal static class LoadGenCommands
{
    private static readonly double[] Rates = [1, 5, 20];

    public static IResourceBuilder<ProjectResource> WithRateCommands(this IResourceBuilder<ProjectResource> loadGen)
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
    public static IResourceBuilder<ProjectResource> WithModeCommands(this IResourceBuilder<ProjectResource> loadGen)
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

    private static CommandOptions Options(string description, string icon) => new()
    {
        Description = description,
        IconName = icon,
        UpdateState = context => context.ResourceSnapshot.State?.Text == KnownResourceStates.Running
            ? ResourceCommandState.Enabled
            : ResourceCommandState.Disabled,
    };

    private static async Task<ExecuteCommandResult> PutAsync<T>(IResourceBuilder<ProjectResource> loadGen, string path, T value, CancellationToken cancellationToken)
    {
        try
        {
            using var client = new HttpClient { BaseAddress = new Uri(loadGen.GetEndpoint("control").Url) };
            using var response = await client.PutAsJsonAsync(path, value, cancellationToken);
            return response.IsSuccessStatusCode
                ? CommandResults.Success()
                : CommandResults.Failure($"LoadGen answered {(int)response.StatusCode} {response.ReasonPhrase}.");
        }
        catch (HttpRequestException exception)
        {
            return CommandResults.Failure($"LoadGen is not reachable: {exception.Message}");
        }
    }
}
