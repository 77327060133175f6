using Bench.Sampling;

namespace Bench.Benches;

/// <summary>
/// <c>bench --grpc</c>: Frontend.Grpc measured against the JSON path (docs/pitfalls/Frontend.Grpc.md). One system of
/// one replica each, every flag optimized but the one a row is about: the product list as JSON (<c>/api/products</c>,
/// each rung of Frontend.CatalogClient), and over gRPC (<c>/api/products/grpc</c>): the unary call, the stream read
/// into generated messages, and the stream read in place at 1, 100, 1,000 and 10,000 products a message. Every row is
/// warmed up first, as <c>bench</c> warms a phase, so no row pays for code the others have not compiled yet (those that
/// hold the whole list just before their first round, so that they come after every other row's first peak); then each
/// runs in each of three rounds, in the same order (the ones that hold the whole list last, so the peaks of the others
/// are their own), each after the flags file is rewritten and a response shows the rung, and a few warm-up requests;
/// requests one at a time. Each row: the client's p50 and p99, and per hop the CPU and bytes allocated per request
/// (its own <c>GET /runtime</c> counters around each phase) and the peak working set (sampled every 50 ms, first round).
/// </summary>
public static class GrpcBench
{
    /// <summary>The row every other is compared with: the JSON path's best rung.</summary>
    public const string Reference = "JSON, optimized";

    private const int Rounds = 3;

    private static readonly string[] Hops = ["Gateway", "Frontend.Api", "Catalog.Api"];

    /// <summary>The rows in the order they run: the streams first, the rungs that hold the whole list last.</summary>
    public static IReadOnlyList<Case> Cases { get; } =
    [
        new("gRPC stream, optimized, 1,000 a message", Pitfalls.FrontendGrpc, PerfMode.Optimized, "/api/products/grpc?batch=1000", 1_000),
        new("gRPC stream, optimized, 10,000 a message", Pitfalls.FrontendGrpc, PerfMode.Optimized, "/api/products/grpc?batch=10000", 10_000),
        new("gRPC stream, optimized, 100 a message", Pitfalls.FrontendGrpc, PerfMode.Optimized, "/api/products/grpc?batch=100", 100),
        new("gRPC stream, optimized, 1 a message", Pitfalls.FrontendGrpc, PerfMode.Optimized, "/api/products/grpc?batch=1", 1),
        new("gRPC stream, streaming, 1,000 a message", Pitfalls.FrontendGrpc, PerfMode.Streaming, "/api/products/grpc?batch=1000", 1_000),
        new(Reference, Pitfalls.FrontendCatalogClient, PerfMode.Optimized, "/api/products", null),
        new("JSON, streaming", Pitfalls.FrontendCatalogClient, PerfMode.Streaming, "/api/products", null),
        new("JSON, naive", Pitfalls.FrontendCatalogClient, PerfMode.Naive, "/api/products", null),
        new("gRPC unary, naive", Pitfalls.FrontendGrpc, PerfMode.Naive, "/api/products/grpc", null),
    ];

    /// <summary>One row: a rung of a flag, the path it serves, and the products per message of a stream (null: not a stream).</summary>
    public sealed record Case(string Name, string Flag, string Rung, string Path, int? Batch);

    /// <summary>One row measured: per hop, CPU ms and allocated MB per request, and peak working set MB.</summary>
    public sealed record Row(
        string Name, string Flag, string Rung, int? Batch, long Requests, long Failed, double P50Ms, double P99Ms,
        IReadOnlyDictionary<string, double> CpuMsPerRequest, IReadOnlyDictionary<string, double> AllocatedMbPerRequest, IReadOnlyDictionary<string, double> PeakWorkingSetMb)
    {
        public double TotalCpuMsPerRequest => CpuMsPerRequest.Values.Sum();
    }

    public sealed record Options(string OutputDirectory, int ProductCount, int Requests, TimeSpan WarmUp, string Configuration);

    public static async Task<IReadOnlyList<Row>> RunAsync(Options options, Action<string> progress, CancellationToken cancellationToken)
    {
        var system = await LocalSystem.LocalSystem.StartAsync(
            new LocalSystemOptions { ProductCount = options.ProductCount, Configuration = options.Configuration }, cancellationToken);
        await using var _ = system;
        await FlagsFile.WriteAsync(system.FlagsFile, FlagsFile.Defaults(), cancellationToken);
        using var client = new HttpClient { BaseAddress = system.Gateway.BaseAddress, Timeout = TimeSpan.FromMinutes(10) };
        var services = system.Services.Where(s => Hops.Contains(s.Name)).OrderBy(s => Array.IndexOf(Hops, s.Name)).ToList();

        var stats = Cases.ToDictionary(c => c, c => new ModeStats(c.Name));
        var cpu = Cases.ToDictionary(c => c, _ => services.ToDictionary(s => s.Name, _ => 0.0));
        var allocated = Cases.ToDictionary(c => c, _ => services.ToDictionary(s => s.Name, _ => 0.0));
        var peaks = new Dictionary<Case, IReadOnlyDictionary<string, long>>();
        // The rows that hold the whole list are warmed up just before their first round instead, so that the peaks of
        // the others, in the first round, are not the memory those left behind.
        foreach (var row in Cases.Where(c => c.Rung != PerfMode.Naive))
        {
            progress($"warming up: {row.Name}");
            await ServeAsync(system, client, row, cancellationToken);
            await BenchRunner.WarmUpAsync(client, () => (row.Name, Get(row.Path)), services, options.WarmUp, 64 * 1024, cancellationToken);
        }

        for (var round = 1; round <= Rounds; round++)
        {
            foreach (var row in Cases)
            {
                await ServeAsync(system, client, row, cancellationToken);
                if (round == 1 && row.Rung == PerfMode.Naive)
                {
                    await BenchRunner.WarmUpAsync(client, () => (row.Name, Get(row.Path)), services, options.WarmUp, 64 * 1024, cancellationToken);
                }

                await LoadRunner.RunAsync(client, _ => (row.Name, Get(row.Path)), 4, concurrency: 1, cancellationToken);

                var before = await BenchRunner.ReadCountersAsync(services, cancellationToken);
                var sampler = new ResourceSampler(services);
                var phase = (await LoadRunner.RunAsync(client, _ => (row.Name, Get(row.Path)), options.Requests, concurrency: 1, cancellationToken, keysInOrder: [row.Name]))[0];
                var peak = await sampler.StopAsync();
                var after = await BenchRunner.ReadCountersAsync(services, cancellationToken);
                peaks.TryAdd(row, peak);
                stats[row].Add(phase);
                foreach (var service in services)
                {
                    cpu[row][service.Name] += after[service.Name].CpuSeconds - before[service.Name].CpuSeconds;
                    allocated[row][service.Name] += after[service.Name].AllocatedBytes - before[service.Name].AllocatedBytes;
                }

                var perHop = string.Join(", ", services.Select(s => Invariant($"{s.Name} {(after[s.Name].CpuSeconds - before[s.Name].CpuSeconds) * 1000 / Math.Max(1, phase.Count):0.0}")));
                progress(Invariant($"round {round}, {row.Name}: {phase.Count} requests, {phase.Errors} failed, p50 {phase.PercentileMs(50):0.0} ms; CPU ms per request: {perHop}"));
            }
        }

        return Cases.Select(c =>
        {
            var s = stats[c];
            var count = Math.Max(1, s.Count);
            return new Row(c.Name, c.Flag, c.Rung, c.Batch, s.Count, s.Errors, s.PercentileMs(50), s.PercentileMs(99),
                cpu[c].ToDictionary(h => h.Key, h => h.Value * 1000 / count),
                allocated[c].ToDictionary(h => h.Key, h => h.Value / count / 1_048_576),
                peaks[c].ToDictionary(h => h.Key, h => h.Value / 1_048_576.0));
        }).ToList();
    }

    private static HttpRequestMessage Get(string path) => new(HttpMethod.Get, path);

    /// <summary>The row's flag set to its rung in the flags file (the other lesson's back to optimized), then requests until a response says it served it.</summary>
    private static async Task ServeAsync(LocalSystem.LocalSystem system, HttpClient client, Case row, CancellationToken cancellationToken)
    {
        var flags = new Dictionary<string, string> { [Pitfalls.FrontendCatalogClient] = PerfMode.Optimized, [Pitfalls.FrontendGrpc] = PerfMode.Optimized, [row.Flag] = row.Rung };
        await FlagsFile.SetAsync(system.FlagsFile, flags, cancellationToken);
        await BenchRunner.UntilServedAsync(client, row.Path, $"{row.Flag}={row.Rung}", cancellationToken);
    }

    /// <summary>report.md: how the rows were measured, by <paramref name="command"/>, then <see cref="Table"/>.</summary>
    public static string Markdown(Options options, IReadOnlyList<Row> rows, string command) => MadeBy.Report(
        "Frontend.Grpc: the product list over gRPC against JSON, side by side", command, MachineInfo.Now(options.Configuration),
        Invariant($"{options.ProductCount:N0} products"),
        Invariant($"""
        One replica of each service (LocalSystem), every flag optimized but the row's: JSON rows are Frontend.CatalogClient's
        rungs on GET /api/products, gRPC rows Frontend.Grpc's on GET /api/products/grpc (`?batch=` products a message).
        Both answer the same bytes; the Gateway relays them the same way. Each row in each of
        {Rounds} rounds, in the table's order, after every row was warmed up as `bench` warms a phase (the naive rows just before their
        first round, after every other row's first peak); in each round, after the flags
        file is rewritten and a response shows the rung, 4 warm-up requests, then {options.Requests} one at a time. CPU and allocated: each
        hop's own counters (`GET /runtime`) around each round, over its requests. Peak working set: sampled every 50 ms in
        the first round; the rows that hold the whole list run last, so the peaks before them are their own.
        """),
        Table(rows));

    /// <summary>The table the report and the page show, with each row's total CPU against the JSON path's optimized rung.</summary>
    public static string Table(IReadOnlyList<Row> rows)
    {
        var reference = rows.SingleOrDefault(r => r.Name == Reference);
        return MarkdownTable.Of(
            "| row | requests | failed | p50 ms | p99 ms | Gateway CPU ms | Frontend.Api CPU ms | Catalog.Api CPU ms | total CPU ms | total ÷ JSON optimized | Frontend.Api allocated MB | Catalog.Api allocated MB | Frontend.Api peak MB | Catalog.Api peak MB |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
            rows.Select(row => Invariant($"| {row.Name} | {row.Requests:N0} | {row.Failed:N0} | {Figures.Ms(row.P50Ms)} | {Figures.Ms(row.P99Ms)} | ")
                + Invariant($"{Hop(row.CpuMsPerRequest, "Gateway")} | {Hop(row.CpuMsPerRequest, "Frontend.Api")} | {Hop(row.CpuMsPerRequest, "Catalog.Api")} | {Figures.Number(row.TotalCpuMsPerRequest)} | ")
                + Invariant($"{Figures.Ratio(row.TotalCpuMsPerRequest, reference?.TotalCpuMsPerRequest)} | {Hop(row.AllocatedMbPerRequest, "Frontend.Api")} | {Hop(row.AllocatedMbPerRequest, "Catalog.Api")} | ")
                + Invariant($"{Hop(row.PeakWorkingSetMb, "Frontend.Api")} | {Hop(row.PeakWorkingSetMb, "Catalog.Api")} |")));
    }

    private static string Hop(IReadOnlyDictionary<string, double> figures, string hop) => Figures.Number(figures.TryGetValue(hop, out var value) ? value : null);
}
