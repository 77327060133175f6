using LoadGen.Load;
using Spectre.Console;
using static System.FormattableString;

namespace LoadGen.Commands;

/// <summary>
/// Progress while an open-model run goes on: a live table on a terminal, refreshed every two seconds, or one plain
/// line every ten when the output is redirected (as under the AppHost, whose console log shows it, and whose Resources
/// page shows the live figures: <c>AppHost/LoadGenStatus.cs</c>).
/// </summary>
internal static class LiveView
{
    private static readonly TimeSpan Refresh = TimeSpan.FromSeconds(2);
    private static readonly TimeSpan LineInterval = TimeSpan.FromSeconds(10);

    public static async Task ShowUntilAsync(Task run, OpenModelRunner runner)
    {
        if (Console.IsOutputRedirected)
        {
            while (await Task.WhenAny(run, Task.Delay(LineInterval)) != run)
            {
                Console.WriteLine(Line(runner));
            }

            return;
        }

        await AnsiConsole.Live(Table(runner)).StartAsync(async context =>
        {
            while (await Task.WhenAny(run, Task.Delay(Refresh)) != run)
            {
                context.UpdateTarget(Table(runner));
            }

            context.UpdateTarget(Table(runner));
        });
    }

    private static Table Table(OpenModelRunner runner)
    {
        var table = new Table()
            .Title(Invariant($"target {runner.Rate.PerSecond:F1}/s, {runner.InFlight} in flight"))
            .AddColumns("scenario/mode", "requests", "errors", "p50 ms", "p90 ms", "p99 ms", "served by");
        foreach (var s in runner.Current)
        {
            table.AddRow(s.Mode, Invariant($"{s.Count}"), Invariant($"{s.Errors}"), Invariant($"{s.PercentileMs(50):F0}"), Invariant($"{s.PercentileMs(90):F0}"), Invariant($"{s.PercentileMs(99):F0}"), Served(s).TrimStart(',', ' '));
        }

        return table;
    }

    private static string Line(OpenModelRunner runner) =>
        Invariant($"target {runner.Rate.PerSecond:F1}/s, {runner.InFlight} in flight | ") +
        string.Join(" | ", runner.Current.Select(s => Invariant($"{s.Mode}: {s.Count} done, {s.Errors} errors, p50 {s.PercentileMs(50):F0} ms, p99 {s.PercentileMs(99):F0} ms{Served(s)}")));

    /// <summary>In follow-flags mode, what served the requests: this is where a flag flip shows.</summary>
    private static string Served(ModeStats stats) =>
        stats.Mode.EndsWith($"/{ModeControl.FollowFlags}", StringComparison.Ordinal)
            ? ", served " + string.Join(" ", stats.Served.OrderBy(s => s.Key, StringComparer.Ordinal).Select(s => Invariant($"{s.Key} {s.Value}")))
            : "";
}
