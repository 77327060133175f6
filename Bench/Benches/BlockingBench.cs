using System.Diagnostics;

namespace Bench.Benches;

/// <summary>
/// <c>bench --blocking</c>: Frontend.Blocking's rungs at rising concurrency (docs/pitfalls/Frontend.Blocking.md). One
/// system of one replica each, every flag optimized but Frontend.Blocking, set to the row's rung in the flags file. Each
/// row sends one product's page (<c>GET /products/{id}</c>, the Catalog answering after its
/// <c>Catalog:ProductLatency</c>) to the Frontend itself from N clients (through the Gateway, its concurrency limit
/// would refuse most of 256 in flight, and measure itself), each sending its next request when its last one
/// answered, for a fixed window. Beside the load, two probes, each one request at a time, ask the Frontend itself for its
/// <c>/health</c> and for another of its routes (<c>/products</c>, the product list), to show what a blocked pool does to the rest of the
/// service. The Frontend's threads are read from /proc every 100 ms. After the load stops, one page at a time is asked
/// until one answers within twice the rung's own time at 1 in flight: the time that took is the row's recovery.
/// The optimized rung runs first, so that the threads the naive one makes are not counted as its own.
/// </summary>
public static class BlockingBench
{
    /// <summary>Requests in flight at each row, per rung.</summary>
    public static readonly int[] DefaultPoints = [1, 16, 64, 256];

    private const string Route = "/products/{id}";

    /// <summary>How long recovery is waited for before the row says it did not recover.</summary>
    private static readonly TimeSpan RecoveryLimit = TimeSpan.FromSeconds(90);

    public sealed record Options(string OutputDirectory, IReadOnlyList<int> Points, TimeSpan Window, int ProductCount, string Configuration);

    /// <summary>
    /// One rung at one concurrency: pages served and failed, pages a second, their p50 and p99; the Frontend's threads when
    /// the row began and at its peak; the probes' p50 and slowest of /health and of the product list; the recovery after the load, in seconds.
    /// </summary>
    public sealed record Row(
        string Rung, int InFlight, long Requests, long Failed, double PerSecond, double P50Ms, double P99Ms,
        int ThreadsAtStart, int PeakThreads, double HealthP50Ms, double HealthMaxMs, double ListP50Ms, double ListMaxMs, double? RecoverySeconds);

    public static async Task<IReadOnlyList<Row>> RunAsync(Options options, Action<string> progress, CancellationToken cancellationToken)
    {
        var system = await LocalSystem.LocalSystem.StartAsync(
            new LocalSystemOptions { ProductCount = options.ProductCount, Configuration = options.Configuration }, cancellationToken);
        await using var _ = system;
        await FlagsFile.WriteAsync(system.FlagsFile, FlagsFile.Defaults(), cancellationToken);
        using var client = new HttpClient { BaseAddress = system.Frontend.BaseAddress, Timeout = TimeSpan.FromSeconds(60) };
        using var frontend = new HttpClient { BaseAddress = system.Frontend.BaseAddress, Timeout = TimeSpan.FromSeconds(60) };
        var rows = new List<Row>();
        foreach (var rung in new[] { PerfMode.Optimized, PerfMode.Naive })
        {
            await FlagsFile.SetAsync(system.FlagsFile, new Dictionary<string, string> { [Pitfalls.FrontendBlocking] = rung }, cancellationToken);
            await BenchRunner.UntilServedAsync(client, Page(1), $"{Pitfalls.FrontendBlocking}={rung}", cancellationToken);
            await RunLoadAsync(client, 4, TimeSpan.FromSeconds(3), cancellationToken); // warm-up, one row's worth of code paths
            double? alone = null;
            foreach (var inFlight in options.Points)
            {
                var row = await MeasureAsync(system, client, frontend, rung, inFlight, options.Window, alone, cancellationToken);
                alone ??= row.P50Ms;
                rows.Add(row);
                progress(Invariant($"{rung} at {inFlight}: {row.Requests} pages, {row.Failed} failed, {row.PerSecond:0} /s, p50 {row.P50Ms:0.0} ms, p99 {row.P99Ms:0.0} ms, threads {row.ThreadsAtStart} -> {row.PeakThreads}, /health p50 {row.HealthP50Ms:0.0} ms, max {row.HealthMaxMs:0.0} ms, list p50 {row.ListP50Ms:0.0} ms, max {row.ListMaxMs:0.0} ms, recovery {row.RecoverySeconds:0.0} s"));
            }
        }

        return rows;
    }

    private static async Task<Row> MeasureAsync(
        LocalSystem.LocalSystem system, HttpClient client, HttpClient frontend, string rung, int inFlight, TimeSpan window, double? alone, CancellationToken cancellationToken)
    {
        var threadsAtStart = Threads(system.Frontend.ProcessId);
        var peak = threadsAtStart;
        using var stop = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        var sampler = Task.Run(async () =>
        {
            while (!stop.IsCancellationRequested)
            {
                peak = Math.Max(peak, Threads(system.Frontend.ProcessId));
                await Task.Delay(100, CancellationToken.None);
            }
        }, CancellationToken.None);
        var health = new ModeStats("health");
        var list = new ModeStats("list");
        // Each probe on its own: in one loop, /health then the list, a stall would fall on whichever was waiting then.
        var probes = Task.WhenAll(ProbeLoopAsync(frontend, "/health", health, stop.Token), ProbeLoopAsync(frontend, "/products", list, stop.Token));

        var started = Stopwatch.GetTimestamp();
        var running = RunLoadAsync(client, inFlight, window, cancellationToken);
        await Task.Delay(window, cancellationToken);
        // Recovery counts from when the clients stopped sending: the requests still queued drain first.
        var recovery = alone is { } p50 ? await RecoveryAsync(client, 2 * p50, cancellationToken) : null;
        var load = await running;
        var seconds = Stopwatch.GetElapsedTime(started).TotalSeconds;
        await stop.CancelAsync();
        await Task.WhenAll(sampler, probes);
        return new Row(rung, inFlight, load.Count, load.Errors, load.Count / seconds, load.PercentileMs(50), load.PercentileMs(99),
            threadsAtStart, peak, health.PercentileMs(50), health.PercentileMs(100), list.PercentileMs(50), list.PercentileMs(100), recovery);
    }

    /// <summary><paramref name="inFlight"/> clients, each sending a page when its last one answered, until <paramref name="window"/> is over.</summary>
    private static async Task<ModeStats> RunLoadAsync(HttpClient client, int inFlight, TimeSpan window, CancellationToken cancellationToken)
    {
        var stats = new ModeStats("page");
        var until = Stopwatch.GetTimestamp() + (long)(window.TotalSeconds * Stopwatch.Frequency);
        var next = 0L;
        await Task.WhenAll(Enumerable.Range(0, inFlight).Select(async _ =>
        {
            var buffer = new byte[16 * 1024];
            while (Stopwatch.GetTimestamp() < until)
            {
                var started = Stopwatch.GetTimestamp();
                stats.Record(started, await Exchange.SendAsync(client, new HttpRequestMessage(HttpMethod.Get, Page(Interlocked.Increment(ref next))), buffer, cancellationToken));
            }
        }));
        return stats;
    }

    /// <summary>Seconds until a page, asked one at a time, answers within <paramref name="withinMs"/>; null when none did within the limit.</summary>
    private static async Task<double?> RecoveryAsync(HttpClient client, double withinMs, CancellationToken cancellationToken)
    {
        var started = Stopwatch.GetTimestamp();
        var buffer = new byte[16 * 1024];
        while (Stopwatch.GetElapsedTime(started) < RecoveryLimit)
        {
            var sent = Stopwatch.GetTimestamp();
            var outcome = await Exchange.SendAsync(client, new HttpRequestMessage(HttpMethod.Get, Page(1)), buffer, cancellationToken);
            if (outcome.Ok && Stopwatch.GetElapsedTime(sent).TotalMilliseconds <= withinMs)
            {
                return Stopwatch.GetElapsedTime(started).TotalSeconds;
            }

            await Task.Delay(50, cancellationToken);
        }

        return null;
    }

    /// <summary>One <paramref name="path"/> at a time until <paramref name="stop"/>; a request in flight then is let finish and counted.</summary>
    private static Task ProbeLoopAsync(HttpClient frontend, string path, ModeStats stats, CancellationToken stop) => Task.Run(async () =>
    {
        var buffer = new byte[64 * 1024];
        while (!stop.IsCancellationRequested)
        {
            var started = Stopwatch.GetTimestamp();
            stats.Record(started, await Exchange.SendAsync(frontend, new HttpRequestMessage(HttpMethod.Get, path), buffer, CancellationToken.None));
        }
    }, CancellationToken.None);

    /// <summary>A page of the first 1,000 products, so every id exists at any catalog size the bench allows.</summary>
    private static string Page(long i) => Invariant($"/products/{1 + (i % 1_000)}");

    /// <summary>The process's threads, from /proc (the runtime's own counters would have to be asked through the starved pool).</summary>
    public static int Threads(int processId)
    {
        foreach (var line in File.ReadLines($"/proc/{processId}/status"))
        {
            if (line.StartsWith("Threads:", StringComparison.Ordinal))
            {
                return int.Parse(line.AsSpan(8).Trim(), System.Globalization.CultureInfo.InvariantCulture);
            }
        }

        return 0;
    }

    /// <summary>report.md: how the rows were measured, by <paramref name="command"/>, then <see cref="Table"/>.</summary>
    public static string Markdown(Options options, IReadOnlyList<Row> rows, string command) => MadeBy.Report(
        "Frontend.Blocking: a product page with a thread blocked on the Catalog call, and without", command, MachineInfo.Now(options.Configuration),
        Invariant($"{options.ProductCount:N0} products, the Catalog sending a product's body 20 ms after its headers (Catalog:ProductLatency)"),
        Invariant($"""
        One replica of each service (LocalSystem), every flag optimized but Frontend.Blocking. Each row: after the flags
        file names the rung and a page shows it, {options.Window.TotalSeconds:0} s of GET {Route} straight to the
        Frontend (the Gateway's concurrency limit would refuse most of 256 in flight) from N clients, each sending its next when its last answered; the optimized rung first, each after 3 s of
        warm-up at 4 in flight. Beside the load, two probes, each one request at a time, of the Frontend's own /health and of its product list (GET
        /products, another route of the same service): their p50 and slowest, over the row and its recovery. Threads: the Frontend process's, from /proc, when the
        row began and at its peak (every 100 ms). Recovery: from when the clients stopped sending until a page asked one at
        a time answers within twice the rung's p50 at 1 in flight (none at 1 in flight, whose p50 is the yardstick; – past
        {RecoveryLimit.TotalSeconds:0} s too).
        """),
        Table(rows));

    /// <summary>The table the report and the page show.</summary>
    public static string Table(IReadOnlyList<Row> rows) => MarkdownTable.Of(
        "| rung | in flight | pages | failed | pages/s | p50 ms | p99 ms | threads at start | peak threads | /health p50 ms | /health max ms | product list p50 ms | product list max ms | recovery s |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        rows.Select(row => Invariant($"| {row.Rung} | {row.InFlight} | {row.Requests:N0} | {row.Failed:N0} | {Figures.Count(row.PerSecond)} | {Figures.Ms(row.P50Ms)} | {Figures.Ms(row.P99Ms)} | ")
            + Invariant($"{row.ThreadsAtStart} | {row.PeakThreads} | {Figures.Ms(row.HealthP50Ms)} | {Figures.Ms(row.HealthMaxMs)} | {Figures.Ms(row.ListP50Ms)} | {Figures.Ms(row.ListMaxMs)} | {Figures.Number(row.RecoverySeconds)} |")));
}
