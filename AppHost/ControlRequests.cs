using System.Text.Json;

/// <summary>
/// What every dashboard command here does: one HTTP request to a resource's control API (the Gateway's admin API,
/// LoadGen's control endpoint), answered as the dashboard shows it: success, or a failure that says who refused and
/// why (the problem response's title and detail), or that it could not be reached. A command never throws.
/// </summary>
internal static class ControlRequests
{
    /// <summary>The command is enabled while its resource runs: the API it calls must be up to take it.</summary>
    public static ResourceCommandState EnabledWhileRunning(UpdateCommandStateContext context) =>
        context.ResourceSnapshot.State?.Text == KnownResourceStates.Running ? ResourceCommandState.Enabled : ResourceCommandState.Disabled;

    public static async Task<ExecuteCommandResult> SendAsync(
        EndpointReference endpoint, string who, HttpRequestMessage request, CancellationToken cancellationToken,
        Func<string, ExecuteCommandResult>? onSuccess = null, TimeSpan? timeout = null)
    {
        try
        {
            using var client = new HttpClient { BaseAddress = new Uri(endpoint.Url), Timeout = timeout ?? TimeSpan.FromSeconds(100) };
            using var response = await client.SendAsync(request, cancellationToken);
            var body = await response.Content.ReadAsStringAsync(cancellationToken);
            return response.IsSuccessStatusCode
                ? onSuccess?.Invoke(body) ?? CommandResults.Success()
                : CommandResults.Failure($"{who} answered {(int)response.StatusCode} {response.ReasonPhrase}{ProblemText(body)}.");
        }
        catch (HttpRequestException exception)
        {
            return CommandResults.Failure($"{who} is not reachable: {exception.Message}");
        }
    }

    // ": title detail" of a problem response; nothing for any other body.
    private static string ProblemText(string body)
    {
        try
        {
            using var problem = JsonDocument.Parse(body);
            var parts = new[] { "title", "detail" }
                .Select(name => problem.RootElement.ValueKind == JsonValueKind.Object && problem.RootElement.TryGetProperty(name, out var value) ? value.GetString() : null)
                .OfType<string>()
                .Select(text => text.TrimEnd('.'));
            var text = string.Join(". ", parts);
            return text.Length == 0 ? "" : $": {text}";
        }
        catch (JsonException)
        {
            return "";
        }
    }
}
