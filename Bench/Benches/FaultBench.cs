using System.Diagnostics;
using System.Globalization;

namespace Bench.Benches;

/// <summary>
/// <c>bench --faults</c>: Frontend.Replicas measured (docs/pitfalls/Frontend.Replicas.md). One system of two replicas
/// of each service; the product list through the Gateway, every flag optimized but Frontend.Replicas, which each rung
/// takes in turn; at 1 and at 16 in flight, for a fixed time each, healthy, with one of the two Catalog replicas frozen
/// (SIGSTOP) for the whole window, and starved (a tenth of a core; root only). Each row: the product list's p50, p99,
/// p99.9 and slowest, failures, and the Catalog requests per product list (the Catalog replicas' own count of the
/// requests they took, read after the fault is undone and the frozen replica has taken what waited for it).
/// </summary>
public static class FaultBench
{
    public const string Healthy = "healthy";
    public const string Frozen = "one of two Catalog replicas frozen";
    public const string Starved = "one of two Catalog replicas starved";

    private static readonly string[] Rungs = [PerfMode.Naive, PerfMode.Optimized];
    private static readonly int[] InFlight = [1, 16];

    public sealed record Row(string Condition, int InFlight, string Rung, long Requests, long Failed, double P50Ms, double P99Ms, double P999Ms, double MaxMs, double CatalogRequestsPerList);

    public sealed record Options(string OutputDirectory, int ProductCount, TimeSpan Window, string Configuration);

    public static async Task<IReadOnlyList<Row>> RunAsync(Options options, Action<string> progress, CancellationToken cancellationToken)
    {
        var system = await LocalSystem.LocalSystem.StartAsync(new LocalSystemOptions { Replicas = 2, ProductCount = options.ProductCount, Configuration = options.Configuration }, cancellationToken);
        await using var _ = system;
        using var client = new HttpClient { BaseAddress = system.Gateway.BaseAddress, Timeout = TimeSpan.FromMinutes(5) };
        var rows = new List<Row>();
        var conditions = ProcessFaults.CanStarve ? new[] { Healthy, Frozen, Starved } : [Healthy, Frozen];
        if (!ProcessFaults.CanStarve)
        {
            progress("starved: skipped (a cgroup's CPU quota needs root)");
        }

        foreach (var rung in Rungs)
        {
            await ServeAsync(system, client, rung, cancellationToken);
            foreach (var condition in conditions)
            {
                foreach (var inFlight in InFlight)
                {
                    progress($"Frontend.Replicas={rung}, {condition}, {inFlight} in flight, {options.Window.TotalSeconds:F0} s");
                    rows.Add(await MeasureAsync(system, client, rung, condition, inFlight, options.Window, cancellationToken));
                }
            }
        }

        return rows;
    }

    /// <summary>Every flag optimized but Frontend.Replicas, then requests until every hop serves that, and a warm-up.</summary>
    private static async Task ServeAsync(LocalSystem.LocalSystem system, HttpClient client, string rung, CancellationToken cancellationToken)
    {
        var flags = FlagsFile.Defaults();
        flags[Pitfalls.FrontendReplicas] = rung;
        await FlagsFile.WriteAsync(system.FlagsFile, flags, cancellationToken);
        var expected = $"{Pitfalls.FrontendReplicas}={rung}";
        var served = 0;
        for (var attempt = 0; attempt < 200 && served < 20; attempt++)
        {
            using var response = await client.GetAsync("/api/products", cancellationToken);
            await response.Content.CopyToAsync(Stream.Null, cancellationToken);
            served = response.Headers.TryGetValues(PerfMode.VariantsHeader, out var values) && string.Join(", ", values).Contains(expected, StringComparison.Ordinal) ? served + 1 : 0;
        }

        if (served < 20)
        {
            throw new InvalidOperationException($"The Frontends did not switch to {expected}.");
        }

        // Warm: past the services' tier-0 code and the hedge delay's first answers (as bench's own warm-up, 10 s).
        var warm = Stopwatch.StartNew();
        while (warm.Elapsed < BenchOptions.DefaultWarmUp)
        {
            await LoadRunner.RunAsync(client, "/api/products", [LoadRunner.FlagsFile], requests: 100, concurrency: 4, cancellationToken);
        }
    }

    private static async Task<Row> MeasureAsync(LocalSystem.LocalSystem system, HttpClient client, string rung, string condition, int inFlight, TimeSpan window, CancellationToken cancellationToken)
    {
        var target = system.CatalogReplicas[0];
        var before = await CatalogRequestsAsync(system, cancellationToken);
        Func<Task> undo = () => Task.CompletedTask;
        if (condition == Frozen)
        {
            await target.FreezeAsync();
            undo = target.ThawAsync;
        }
        else if (condition == Starved)
        {
            undo = await target.StarveAsync();
        }

        var stats = new ModeStats(rung);
        try
        {
            var deadline = Stopwatch.GetTimestamp() + (long)(window.TotalSeconds * Stopwatch.Frequency);
            await Task.WhenAll(Enumerable.Range(0, inFlight).Select(async _ =>
            {
                var buffer = new byte[64 * 1024];
                while (Stopwatch.GetTimestamp() < deadline)
                {
                    var started = Stopwatch.GetTimestamp();
                    stats.Record(started, await Exchange.SendAsync(client, new HttpRequestMessage(HttpMethod.Get, "/api/products"), buffer, cancellationToken));
                }
            }));
        }
        finally
        {
            await undo();
        }

        // The frozen replica takes the requests that waited in its sockets once it runs again: count them too.
        await Task.Delay(TimeSpan.FromSeconds(3), cancellationToken);
        var taken = await CatalogRequestsAsync(system, cancellationToken) - before;
        return new Row(condition, inFlight, rung, stats.Count, stats.Errors, stats.PercentileMs(50), stats.PercentileMs(99), stats.PercentileMs(99.9), stats.PercentileMs(100),
            stats.Count == 0 ? 0 : (double)taken / stats.Count);
    }

    private static async Task<long> CatalogRequestsAsync(LocalSystem.LocalSystem system, CancellationToken cancellationToken) =>
        (await Task.WhenAll(system.CatalogReplicas.Select(c => c.ReadRuntimeCountersAsync(cancellationToken)))).Sum(c => c.ServedRequests);

    /// <summary>report.md: how the rows were measured, by <paramref name="command"/>, then <see cref="Table"/>.</summary>
    public static string Markdown(Options options, IReadOnlyList<Row> rows, string command) => MadeBy.Report(
        "Frontend.Replicas: the product list with a Catalog replica frozen or starved", command, MachineInfo.Now(options.Configuration),
        Invariant($"{options.ProductCount:N0} products, {options.Window.TotalSeconds:F0} s per row"),
        """
        Two replicas of each service (LocalSystem), the product list through the Gateway, every flag optimized but
        Frontend.Replicas. The fault lasts the row's whole window; requests still waiting at its end are counted when
        they end. Catalog requests per product list: the Catalog replicas' own count (a request a frozen replica took
        counts once it runs again), over the product lists sent.
        """,
        Table(rows));

    /// <summary>The table the report and the pitfall's page show.</summary>
    public static string Table(IReadOnlyList<Row> rows) => MarkdownTable.Of(
        "| condition | in flight | rung | product lists | failed | p50 ms | p99 ms | p99.9 ms | slowest ms | Catalog requests per product list |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|",
        rows.OrderBy(r => Array.IndexOf([Healthy, Frozen, Starved], r.Condition)).ThenBy(r => r.InFlight).ThenBy(r => r.Rung, StringComparer.Ordinal).Select(row =>
            Invariant($"| {row.Condition} | {row.InFlight} | {row.Rung} | {row.Requests:N0} | {row.Failed:N0} | {Ms(row.P50Ms)} | {Ms(row.P99Ms)} | {Ms(row.P999Ms)} | {Ms(row.MaxMs)} | {row.CatalogRequestsPerList:F3} |")));

    private static string Ms(double ms) => ms >= 100 ? ms.ToString("N0", CultureInfo.InvariantCulture) : ms.ToString("G3", CultureInfo.InvariantCulture);
}
