using Bench.Benches;
using Bench.Reports;
using HttpPerf.Tests.Infrastructure;

namespace HttpPerf.Tests.Processes;

/// <summary>
/// <c>Bench bench</c> end to end at a small size: its own services per mode, every scenario, the report
/// files. Figures are checked for being measured and consistent, never for being fast.
/// </summary>
[Collection(Lanes.Processes)]
[Trait(Kind.Name, Kind.Processes)]
public sealed class BenchTests
{
    [Fact]
    public async Task Bench_measures_every_scenario_in_every_mode_and_writes_the_report()
    {
        using var bench = new BenchOutput();
        var result = await bench.RunAsync(
            "--scenario", "products,catalog,export,upload,upload-sha256,download,download-4k,products-direct",
            "--products", "500", "--requests", "3", "--concurrency", "2", "--concurrent-requests", "4", "--upload-mb", "1", "--uploads", "2");
        (string Scenario, int Concurrency, string[] Modes)[] expected =
        [
            ("products", 1, BenchRunner.Modes), ("products", 2, BenchRunner.Modes),
            ("catalog", 1, BenchRunner.Modes), ("catalog", 2, BenchRunner.Modes),
            ("export", 1, [BenchRunner.Naive, BenchRunner.Optimized]),
            ("upload", 1, [BenchRunner.Naive, BenchRunner.Optimized, BenchRunner.Baseline, BenchRunner.Streaming]),
            ("upload-sha256", 1, [BenchRunner.Naive, BenchRunner.Optimized, BenchRunner.Baseline, BenchRunner.Streaming]),
            ("download", 1, [BenchRunner.Naive, BenchRunner.Optimized]),
            ("download-4k", 1, [BenchRunner.Naive, BenchRunner.Optimized]),
            ("products-direct", 1, [BenchRunner.Naive, BenchRunner.Optimized, BenchRunner.Baseline]),
        ];
        Assert.Equal(
            expected.SelectMany(e => e.Modes.Select(m => $"{e.Scenario}/{e.Concurrency}/{m}")).Order(),
            result.Phases.Select(p => $"{p.Scenario}/{p.Concurrency}/{p.Mode}").Order());

        foreach (var phase in result.Phases)
        {
            var what = $"{phase.Scenario}/{phase.Concurrency}/{phase.Mode}";
            Assert.True(phase.Errors == 0, $"{what}: {phase.Errors} errors");
            Assert.Equal(phase.Concurrency == 1 ? (phase.Scenario is "upload" or "upload-sha256" or "download" or "download-4k" ? 2 : 3) : 4, phase.Requests);
            Assert.Equal(BenchScenarios.Find(phase.Scenario).Services, phase.Services.Keys);
            Assert.True(phase.FirstByteP50Ms > 0 && phase.FirstByteP50Ms <= phase.P50Ms, $"{what}: first byte {phase.FirstByteP50Ms} ms, p50 {phase.P50Ms} ms");
            Assert.True(phase.P50Ms <= phase.P90Ms && phase.P90Ms <= phase.P99Ms, what);
            Assert.Equal(phase.Latency.Select(l => l.Ms).Order(), phase.Latency.Select(l => l.Ms));
            Assert.NotEmpty(phase.WorkingSet);
            Assert.All(phase.Services.Values, s =>
            {
                Assert.True(s.PeakWorkingSetBytes > 10_000_000, $"{what}: working set {s.PeakWorkingSetBytes}");
                Assert.True(s.AllocatedBytesPerRequest > 0, $"{what}: allocations");
                Assert.True(s.CpuMsPerRequest > 0, $"{what}: CPU");
            });
        }

        // The modes carry the same bytes: naive, streaming and optimized bodies match, and so does the catalog baseline.
        PhaseResult Phase(string scenario, string mode) => result.Phases.Single(p => p.Scenario == scenario && p.Mode == mode && p.Concurrency == 1);
        foreach (var scenario in new[] { "products", "catalog", "export", "download" })
        {
            Assert.Equal(Phase(scenario, BenchRunner.Naive).ResponseBytes, Phase(scenario, BenchRunner.Optimized).ResponseBytes);
        }

        Assert.Equal(Phase("products", BenchRunner.Naive).ResponseBytes, Phase("products", BenchRunner.Streaming).ResponseBytes);
        Assert.Equal(Phase("catalog", BenchRunner.Naive).ResponseBytes, Phase("catalog", BenchRunner.Streaming).ResponseBytes);

        Assert.Equal(Phase("catalog", BenchRunner.Optimized).ResponseBytes, Phase("catalog", BenchRunner.Baseline).ResponseBytes);
        Assert.Equal(1L << 20, Phase("download", BenchRunner.Optimized).ResponseBytes);
        Assert.Equal(1L << 20, Phase("download-4k", BenchRunner.Naive).ResponseBytes);
        Assert.Equal(["Gateway", "Frontend.Api", "Catalog.Api"], Phase("products", BenchRunner.Naive).Services.Keys);
        // Straight to Frontend.Api: the same body, and the Gateway is not charged.
        Assert.Equal(Phase("products", BenchRunner.Optimized).ResponseBytes, Phase("products-direct", BenchRunner.Optimized).ResponseBytes);
        Assert.Equal(["Frontend.Api", "Catalog.Api"], Phase("products-direct", BenchRunner.Optimized).Services.Keys);

        // Optimized bodies leave each hop in large writes (one HTTP chunk each): the services serialize in 64 KB
        // buffers, and the Gateway relays what has arrived in pieces of up to 64 KB, not HttpClient's 4 KB ones.
        var products = Phase("products", BenchRunner.Optimized).Services;
        Assert.True(products["Catalog.Api"].MeanWriteBytes >= 32 * 1024, $"Catalog.Api writes {products["Catalog.Api"].MeanWriteBytes} bytes at a time");
        Assert.True(products["Frontend.Api"].MeanWriteBytes >= 32 * 1024, $"Frontend.Api writes {products["Frontend.Api"].MeanWriteBytes} bytes at a time");
        Assert.True(products["Gateway"].MeanWriteBytes >= 16 * 1024, $"the Gateway writes {products["Gateway"].MeanWriteBytes} bytes at a time");

        // Every target was computed from figures of this run, and the report shows each.
        Assert.Equal(12, result.Targets.Count);
        Assert.All(result.Targets, t => Assert.NotNull(t.Met));
        var markdown = await File.ReadAllTextAsync(ReportFiles.MarkdownPath(bench.Folder), Cancel);
        Assert.All(result.Targets, t => Assert.Contains($"| {t.Target} | {t.Comparison} |", markdown));
        Assert.Contains("| products | 2 |", markdown);
        Assert.Contains("## Ladders: each rung, hop by hop", markdown);
        Assert.Contains("| streaming |", markdown);

        var charts = Directory.GetFiles(bench.Folder, "*.png");
        Assert.Equal(3 * expected.Length, charts.Length); // latency, working set and CPU by service
        foreach (var chart in charts)
        {
            Assert.Contains($"]({Path.GetFileName(chart)})", markdown);
            var header = new byte[8];
            await using var file = File.OpenRead(chart);
            await file.ReadExactlyAsync(header, Cancel);
            Assert.Equal(new byte[] { 0x89, (byte)'P', (byte)'N', (byte)'G', 0x0D, 0x0A, 0x1A, 0x0A }, header);
        }
    }

    [Fact]
    public async Task A_size_sweep_measures_each_point_in_every_mode_and_says_how_cost_grows()
    {
        using var bench = new BenchOutput();
        var result = await bench.RunAsync("--sweep", "size", "--points", "200,2000", "--requests", "2");
        Assert.Equal(8, result.Phases.Count);
        Assert.All(result.Phases, p => Assert.Equal(("products", 1, 0L), (p.Scenario, p.Concurrency, p.Errors)));
        foreach (var mode in BenchRunner.Modes)
        {
            var sizes = result.Phases.Where(p => p.Mode == mode).Select(p => p.ResponseBytes).Order().ToList();
            Assert.True(sizes[1] > sizes[0] * 5, $"{mode}: bodies of {string.Join(", ", sizes)} bytes for 200 and 2,000 products");
            Assert.NotNull(SweepReport.Slope(result, mode, p => p.P50Ms));
        }

        var markdown = await File.ReadAllTextAsync(ReportFiles.MarkdownPath(bench.Folder), Cancel);
        Assert.Contains("**How cost grows**", markdown);
        var charts = Directory.GetFiles(bench.Folder, "*.png").Select(Path.GetFileName).Order().ToList();
        Assert.Equal(["sweep-size-latency.png", "sweep-size-working-set.png"], charts);
        Assert.All(charts, chart => Assert.Contains($"]({chart})", markdown));

        // A scenario it does not know is an error, not an empty run.
        Assert.NotEqual(0, await bench.InvokeAsync("--scenario", "teleport"));
    }

    [Fact]
    public async Task The_grpc_bench_measures_every_row_beside_JSON_and_writes_the_report()
    {
        using var bench = new BenchOutput();
        Assert.Equal(0, await bench.InvokeAsync("--grpc", "--products", "300", "--requests", "2"));

        var rows = ReportFiles.Read<IReadOnlyList<GrpcBench.Row>>(bench.Folder);
        Assert.Equal(GrpcBench.Cases.Select(c => c.Name), rows.Select(r => r.Name));
        Assert.All(rows, r =>
        {
            Assert.Equal((6L, 0L), (r.Requests, r.Failed));
            Assert.Equal(["Gateway", "Frontend.Api", "Catalog.Api"], r.CpuMsPerRequest.Keys);
            Assert.All(r.CpuMsPerRequest.Values, ms => Assert.True(ms > 0, $"{r.Name}: {ms} ms"));
            Assert.All(r.PeakWorkingSetMb.Values, mb => Assert.True(mb > 10, $"{r.Name}: {mb} MB"));
        });
        var markdown = await File.ReadAllTextAsync(ReportFiles.MarkdownPath(bench.Folder), Cancel);
        Assert.Contains(GrpcBench.Table(rows), markdown);
        Assert.Contains("| JSON, optimized | 6 | 0 |", markdown);
        // The report says the command that remakes it: this one.
        Assert.Equal(MadeBy.Command(["bench", "--out", bench.Folder, "--warmup", "0", "--grpc", "--products", "300", "--requests", "2"]), MadeBy.CommandIn(markdown));
    }

    /// <summary>The bench command, run through its command line into a temp folder of its own, deleted at the end.</summary>
    private sealed class BenchOutput : IDisposable
    {
        public string Folder { get; } = Directory.CreateTempSubdirectory("httpperf-bench-test-").FullName;

        /// <summary>Runs <c>bench --out Folder</c> with <paramref name="options"/>; it must succeed. Returns the report it wrote.</summary>
        public async Task<BenchResult> RunAsync(params string[] options)
        {
            Assert.Equal(0, await InvokeAsync(options));
            return ReportFiles.Read<BenchResult>(Folder);
        }

        public Task<int> InvokeAsync(params string[] options)
        {
            var root = new System.CommandLine.RootCommand { Bench.Commands.BenchCommand.Create() };
            // An exception the bench does not handle fails the test with its stack, rather than as exit code 1 with
            // the handler's message on a console the test runner does not show.
            return root.Parse(["bench", "--out", Folder, "--warmup", "0", .. options]).InvokeAsync(new() { EnableDefaultExceptionHandler = false }, Cancel);
        }

        public void Dispose() => Directory.Delete(Folder, recursive: true);
    }
}
