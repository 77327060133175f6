using System.Globalization;
using System.Net.Http.Json;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.ServiceDefaults;
using Microsoft.Extensions.Hosting;

/// <summary>
/// LoadGen's state where the dashboard shows it without logs or a click: while it runs, its rate, mode, requests sent
/// and errors, read from its control endpoint (<c>GET /status</c>) every 2 s, as the text of its <c>/status</c> link
/// in the Resources page's URLs column, and as properties of the resource (its details pane, and <c>aspire describe</c>).
/// The text lives on the link's <see cref="ResourceUrlAnnotation"/>, which the AppHost reads again whenever it rebuilds
/// the resource's snapshot, and is published at once; the resource's state text stays Running, which commands and
/// health checks compare against. A run has no end under the AppHost, so these say it goes on.
/// </summary>
internal sealed class LoadGenStatus(DistributedApplicationModel model, ResourceNotificationService notifications) : BackgroundService
{
    /// <summary>The link's text before the first read.</summary>
    public const string Waiting = "LoadGen status";

    private static readonly TimeSpan Interval = TimeSpan.FromSeconds(2);

    protected override async Task ExecuteAsync(CancellationToken stoppingToken)
    {
        var loadGen = model.Resources.OfType<IResourceWithEndpoints>().Single(r => r.Name == SystemContract.LoadGen);
        using var client = new HttpClient { Timeout = TimeSpan.FromSeconds(2) };
        using var timer = new PeriodicTimer(Interval);
        while (await timer.WaitForNextTickAsync(stoppingToken))
        {
            if (!notifications.TryGetCurrentState(loadGen.Name, out var state) || state.Snapshot.State?.Text != KnownResourceStates.Running)
            {
                continue;
            }

            try
            {
                var status = await client.GetFromJsonAsync<Status>(new Uri(new Uri(loadGen.GetEndpoint("control").Url), SystemContract.StatusPath), stoppingToken);
                if (status is not null)
                {
                    ResourcePropertySnapshot[] properties =
                    [
                        new("loadgen.rate", $"{status.Rate.ToString(CultureInfo.InvariantCulture)}/s"),
                        new("loadgen.mode", status.Mode),
                        new("loadgen.requests", status.Requests),
                        new("loadgen.errors", status.Errors),
                        new("loadgen.running_since", status.RunningSince?.ToString("u", CultureInfo.InvariantCulture)),
                    ];
                    var text = string.Create(CultureInfo.InvariantCulture, $"LoadGen: {status.Rate}/s, {status.Mode}, {status.Requests:N0} requests, {status.Errors:N0} errors");
                    foreach (var url in loadGen.Annotations.OfType<ResourceUrlAnnotation>().Where(u => IsStatus(u.Url)))
                    {
                        url.DisplayText = text;
                    }

                    await notifications.PublishUpdateAsync(loadGen, snapshot => snapshot with
                    {
                        Properties = snapshot.Properties.RemoveAll(p => properties.Any(n => n.Name == p.Name)).AddRange(properties),
                        Urls = [.. snapshot.Urls.Select(u => IsStatus(u.Url) ? u with { DisplayProperties = u.DisplayProperties with { DisplayName = text } } : u)],
                    });
                }
            }
            catch (Exception exception) when (exception is HttpRequestException or TaskCanceledException or System.Text.Json.JsonException or InvalidOperationException)
            {
                // Starting, or stopping: the next tick reads it again.
            }
        }
    }

    private static bool IsStatus(string url) => url.EndsWith(SystemContract.StatusPath, StringComparison.Ordinal);

    private sealed record Status(double Rate, string Mode, long Requests, long Errors, DateTimeOffset? RunningSince);
}
