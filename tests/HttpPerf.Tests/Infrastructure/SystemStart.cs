using Aspire.Hosting;
using Aspire.Hosting.ApplicationModel;
using Aspire.Hosting.Testing;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging.Testing;

namespace HttpPerf.Tests.Infrastructure;

/// <summary>
/// Starts a system built by Aspire.Hosting.Testing and waits until its resources are healthy, within a deadline. A
/// deadline that runs out names what it waited for and what it saw last: each resource's state and health checks, the
/// last lines of the resources not yet healthy, and the AppHost's own last log lines (container mode's image builds).
/// </summary>
internal static class SystemStart
{
    /// <summary>Keeps the AppHost's log records (Microsoft.Extensions.Diagnostics.Testing), for a start that runs out.</summary>
    public static void KeepLogs(this IDistributedApplicationTestingBuilder builder) => builder.Services.AddFakeLogging();

    /// <summary>
    /// Starts <paramref name="app"/> and awaits each of <paramref name="resources"/> healthy, in order, then returns their
    /// snapshots; past <paramref name="deadline"/>, throws a <see cref="TimeoutException"/> that says what it saw.
    /// </summary>
    public static async Task<IReadOnlyList<ResourceEvent>> StartHealthyAsync(this DistributedApplication app, IReadOnlyList<string> resources, TimeSpan deadline, CancellationToken cancellationToken)
    {
        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        timeout.CancelAfter(deadline);
        var started = DateTimeOffset.UtcNow;
        var waitingFor = "the AppHost's start (container mode builds its images first)";
        try
        {
            await app.StartAsync(timeout.Token);
            List<ResourceEvent> healthy = [];
            foreach (var name in resources)
            {
                waitingFor = $"{name} healthy";
                healthy.Add(await app.ResourceNotifications.WaitForResourceHealthyAsync(name, timeout.Token));
            }

            return healthy;
        }
        catch (OperationCanceledException) when (timeout.IsCancellationRequested && !cancellationToken.IsCancellationRequested)
        {
            throw new TimeoutException(
                $"The system was not up in {deadline.TotalMinutes:0.#} min (since {started:HH:mm:ss} UTC); it waited for {waitingFor}.\n"
                + await DescribeAsync(app, resources));
        }
    }

    private static async Task<string> DescribeAsync(DistributedApplication app, IReadOnlyList<string> resources)
    {
        var lines = new List<string> { "Resources:" };
        foreach (var name in resources)
        {
            if (!app.ResourceNotifications.TryGetCurrentState(name, out var state))
            {
                lines.Add($"  {name}: no state yet");
                continue;
            }

            var snapshot = state.Snapshot;
            var checks = string.Join(", ", snapshot.HealthReports.Select(r => $"{r.Name} {r.Status?.ToString() ?? "not run"}{(r.Description is { } d ? $" ({d})" : "")}"));
            lines.Add($"  {name}: {snapshot.State?.Text ?? "no state"}, health {snapshot.HealthStatus?.ToString() ?? "unknown"}{(checks.Length > 0 ? $": {checks}" : "")}");
            if (snapshot.HealthStatus != Microsoft.Extensions.Diagnostics.HealthChecks.HealthStatus.Healthy)
            {
                lines.AddRange((await LastLinesAsync(app, name, 8)).Select(line => $"    | {line}"));
            }
        }

        if (app.Services.GetService<FakeLogCollector>() is { } logs)
        {
            lines.Add("The AppHost's last log lines:");
            lines.AddRange(logs.GetSnapshot().TakeLast(30).Select(r => $"  {r.Timestamp:HH:mm:ss} {r.Level} {r.Category}: {r.Message}"));
        }

        return string.Join('\n', lines);
    }

    // The resource's console, as the dashboard shows it: its last lines, read for at most 5 s.
    private static async Task<IReadOnlyList<string>> LastLinesAsync(DistributedApplication app, string name, int count)
    {
        var lines = new List<string>();
        using var read = new CancellationTokenSource(TimeSpan.FromSeconds(5));
        try
        {
            await foreach (var batch in app.Services.GetRequiredService<ResourceLoggerService>().GetAllAsync(name).WithCancellation(read.Token))
            {
                lines.AddRange(batch.Select(line => line.Content));
            }
        }
        catch (OperationCanceledException)
        {
            lines.Add("(its log could not be read in 5 s)");
        }

        return lines.TakeLast(count).ToList();
    }
}
