using System.Diagnostics;
using System.Globalization;
using System.Text;
using Aspire.Hosting.ApplicationModel;
using Aspire.Hosting;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.ServiceDefaults;
using Bench.LocalSystem;
using HttpPerf.Tests.Infrastructure;

namespace HttpPerf.Tests.AppHost;

/// <summary>
/// The live demo as README's "Watching a flag flip" runs it, measured, when asked (about 12 minutes):
/// <c>DEMO_MEASUREMENT=docs/results/demo dotnet test HttpPerf.slnx --filter DemoMeasurement</c> (<c>DEMO_MINUTES</c>, 10
/// by default). The AppHost runs with its own catalog and LoadGen's default load, started from its command; five
/// flips of Catalog.Serialization and two "A/B: measure now" are run from the dashboard's commands. Then the
/// dashboard's structured logs (its telemetry API, what <c>aspire otel logs</c> reads) are counted per resource and
/// logger category, and written to report.md there. It then checks that the demo's logs stay readable: at most 10% of
/// the records from status polling (LoadGen's control endpoint's request lines), and exactly one audit record per flip.
/// The same test run on the tree before those logs were quieted gave docs/results/demo/before-c52345f.md (189 records a minute from LoadGen, 41%
/// of all).
/// </summary>
[Collection(Lanes.Orchestrated)]
[Trait(Kind.Name, Kind.AppHost)]
public sealed class DemoMeasurement
{
    [Fact]
    public async Task Ten_minutes_of_the_default_load_with_five_flips_and_two_AB_runs()
    {
        await using var run = OptInRun.AskedBy("DEMO_MEASUREMENT", "measure the live demo's logs (docs/results/demo)");
        var minutes = int.TryParse(Environment.GetEnvironmentVariable("DEMO_MINUTES"), CultureInfo.InvariantCulture, out var m) ? m : 10;
        var system = await run.StartAsync(new AppHostFixture(productCount: null));
        var start = await system.Commands.ExecuteCommandAsync(SystemContract.LoadGen, KnownResourceCommands.StartCommand, Cancel);
        Assert.True(start.Success, start.Message);
        var started = DateTime.UtcNow;
        var clock = Stopwatch.StartNew();

        // Flips at minutes 1, 3, 5, 7 and 9 (scaled to the run), A/B runs at 4 and 8.
        var flips = 0;
        var measurements = 0;
        var plan = new List<(double At, string Resource, string Command)>();
        for (var i = 0; i < 5; i++)
        {
            plan.Add((minutes * (1 + 2 * i) / 10.0, SystemContract.Catalog, $"{Pitfalls.CatalogSerialization}-{(i % 2 == 0 ? PerfMode.Naive : PerfMode.Optimized)}"));
        }

        plan.Add((minutes * 0.4, SystemContract.LoadGen, "measure-ab"));
        plan.Add((minutes * 0.8, SystemContract.LoadGen, "measure-ab"));
        foreach (var (at, resource, command) in plan.OrderBy(p => p.At))
        {
            await Poll.UntilElapsedAsync(clock, TimeSpan.FromMinutes(at));
            var result = await system.Commands.ExecuteCommandAsync(resource, command, Cancel);
            Assert.True(result.Success, $"{command}: {result.Message}");
            _ = resource == SystemContract.Catalog ? flips++ : measurements++;
        }

        await Poll.UntilElapsedAsync(clock, TimeSpan.FromMinutes(minutes));
        await Task.Delay(TimeSpan.FromSeconds(5), Cancel); // the last batches of logs reach the dashboard

        using var dashboard = DashboardSpans.Client(system, TimeSpan.FromMinutes(2));
        var logs = new Dictionary<string, IReadOnlyList<DashboardLogs.Log>>();
        foreach (var resource in SystemContract.Services.Select(s => s.Name).Append(SystemContract.LoadGen))
        {
            logs[resource] = [.. (await DashboardLogs.GetAsync(dashboard, resource, "", Cancel)).Where(l => l.Time >= started)];
        }

        // LoadGen's control endpoint serves the AppHost's /status polling every 2 s, and a few commands.
        static bool Polling(string resource, DashboardLogs.Log log) =>
            resource == SystemContract.LoadGen && log.Category.StartsWith("Microsoft.AspNetCore", StringComparison.Ordinal);
        var total = logs.Values.Sum(l => l.Count);
        var polling = logs.Sum(l => l.Value.Count(log => Polling(l.Key, log)));
        var audit = logs[SystemContract.Gateway].Where(l => l.Category == SystemContract.AuditCategory).ToList();
        var measured = logs[SystemContract.LoadGen].Where(l => l.Category == SystemContract.AuditCategory).ToList();

        var report = new StringBuilder();
        report.AppendLine(CultureInfo.InvariantCulture, $"# The live demo's structured logs, {DateTime.UtcNow:yyyy-MM-dd}");
        report.AppendLine();
        report.AppendLine(CultureInfo.InvariantCulture, $"`DEMO_MEASUREMENT={Path.GetRelativePath(LocalSystem.RepositoryRoot(), run.Folder)} dotnet test HttpPerf.slnx --filter DemoMeasurement`: the AppHost with its own");
        report.AppendLine(CultureInfo.InvariantCulture, $"catalog, LoadGen's default load (1 request a second, the five scenarios, following the flags) for {minutes} minutes,");
        report.AppendLine(CultureInfo.InvariantCulture, $"{flips} flips of Catalog.Serialization and {measurements} \"A/B: measure now\" from the dashboard's commands. Records the");
        report.AppendLine("dashboard holds (its telemetry API), per resource:");
        report.AppendLine();
        report.AppendLine("| resource | records | per minute | largest categories |");
        report.AppendLine("|---|---:|---:|---|");
        foreach (var (resource, records) in logs)
        {
            var categories = string.Join(", ", records.GroupBy(r => r.Category).OrderByDescending(g => g.Count()).Take(3).Select(g => $"{g.Key} {g.Count()}"));
            report.AppendLine(CultureInfo.InvariantCulture, $"| {resource} | {records.Count:N0} | {records.Count / (double)minutes:F1} | {categories} |");
        }

        report.AppendLine();
        report.AppendLine(CultureInfo.InvariantCulture, $"All: {total:N0} records. Status polling (LoadGen's ASP.NET Core request lines): {polling:N0} ({(total == 0 ? 0 : 100.0 * polling / total):F1}%).");
        report.AppendLine(CultureInfo.InvariantCulture, $"Audit: {audit.Count} FlagChanged records for {flips} flips; {measured.Count} AbMeasured records for {measurements} measurements.");
        report.AppendLine();
        foreach (var record in audit.Concat(measured).OrderBy(r => r.Time))
        {
            report.AppendLine(CultureInfo.InvariantCulture, $"- {record.Time:HH:mm:ss} {record.Body}");
        }

        await File.WriteAllTextAsync(Path.Combine(run.Folder, "report.md"), report.ToString(), Cancel);
        TestContext.Current.TestOutputHelper?.WriteLine(report.ToString());

        Assert.True(polling <= total * 0.10, $"{polling} of {total} records are status polling");
        Assert.Equal(flips, audit.Count);
        Assert.All(audit, r => Assert.Equal("dashboard-command", r["Source"]));
        Assert.Equal(measurements, measured.Count);
    }
}
