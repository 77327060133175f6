using System.Globalization;
using System.Net.Http.Json;

/// <summary>
/// Dashboard buttons on the LoadGen resource that change its arrival rate while it runs, through its
/// control endpoint (<c>PUT /rate</c>).
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
                executeCommand: context => SetRateAsync(loadGen, rate, context.CancellationToken),
                commandOptions: new CommandOptions
                {
                    Description = $"Start {rate.ToString(CultureInfo.InvariantCulture)} requests a second from now on.",
                    IconName = "TopSpeed",
                    UpdateState = context => context.ResourceSnapshot.State?.Text == KnownResourceStates.Running
                        ? ResourceCommandState.Enabled
                        : ResourceCommandState.Disabled,
                });
        }

        return loadGen;
    }

    private static async Task<ExecuteCommandResult> SetRateAsync(IResourceBuilder<ProjectResource> loadGen, double rate, CancellationToken cancellationToken)
    {
        try
        {
            using var client = new HttpClient { BaseAddress = new Uri(loadGen.GetEndpoint("control").Url) };
            using var response = await client.PutAsJsonAsync("/rate", rate, cancellationToken);
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
