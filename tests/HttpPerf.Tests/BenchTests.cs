using LoadGen.Bench;

namespace HttpPerf.Tests;

/// <summary>
/// <c>LoadGen bench</c> end to end at a small size: its own services per mode, every scenario, the report
/// files. Figures are checked for being measured and consistent, never for being fast.
/// </summary>
public sealed class BenchTests
{
    private static CancellationToken Cancel => TestContext.Current.CancellationToken;

    [Fact]
    public async Task Bench_measures_every_scenario_in_every_mode_and_writes_the_report()
    {
        var output = Directory.CreateTempSubdirectory("httpperf-bench-test-").FullName;
        try
        {
            var root = new System.CommandLine.RootCommand { LoadGen.Commands.BenchCommand.Create() };
            string[] args = ["bench", "--out", output, "--products", "500", "--requests", "3", "--concurrency", "2", "--concurrent-requests", "4", "--upload-mb", "1", "--uploads", "2"];

            var exitCode = await root.Parse(args).InvokeAsync(cancellationToken: Cancel);

            Assert.Equal(0, exitCode);
            var result = BenchReport.Read(output);
            (string Scenario, int Concurrency, string[] Modes)[] expected =
            [
                ("products", 1, BenchRunner.Modes), ("products", 2, BenchRunner.Modes),
                ("catalog", 1, BenchRunner.Modes), ("catalog", 2, BenchRunner.Modes),
                ("export", 1, [BenchRunner.Naive, BenchRunner.Optimized]),
                ("upload", 1, BenchRunner.Modes), ("download", 1, [BenchRunner.Naive, BenchRunner.Optimized]),
            ];
            Assert.Equal(
                expected.SelectMany(e => e.Modes.Select(m => $"{e.Scenario}/{e.Concurrency}/{m}")).Order(),
                result.Phases.Select(p => $"{p.Scenario}/{p.Concurrency}/{p.Mode}").Order());

            foreach (var phase in result.Phases)
            {
                var what = $"{phase.Scenario}/{phase.Concurrency}/{phase.Mode}";
                Assert.True(phase.Errors == 0, $"{what}: {phase.Errors} errors");
                Assert.Equal(phase.Concurrency == 1 ? (phase.Scenario is "upload" or "download" ? 2 : 3) : 4, phase.Requests);
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

            // The modes carry the same bytes: naive and optimized bodies match, and so does the catalog baseline.
            PhaseResult Phase(string scenario, string mode) => result.Phases.Single(p => p.Scenario == scenario && p.Mode == mode && p.Concurrency == 1);
            foreach (var scenario in new[] { "products", "catalog", "export", "download" })
            {
                Assert.Equal(Phase(scenario, BenchRunner.Naive).ResponseBytes, Phase(scenario, BenchRunner.Optimized).ResponseBytes);
            }

            Assert.Equal(Phase("catalog", BenchRunner.Optimized).ResponseBytes, Phase("catalog", BenchRunner.Baseline).ResponseBytes);
            Assert.Equal(1L << 20, Phase("download", BenchRunner.Optimized).ResponseBytes);
            Assert.Equal(["Gateway", "Frontend.Api", "Catalog.Api"], Phase("products", BenchRunner.Naive).Services.Keys);

            // Every target was computed from figures of this run, and the report shows each.
            Assert.Equal(6, result.Targets.Count);
            Assert.All(result.Targets, t => Assert.NotNull(t.Met));
            var markdown = await File.ReadAllTextAsync(Path.Combine(output, BenchReport.MarkdownFile), Cancel);
            Assert.All(result.Targets, t => Assert.Contains($"| {t.Target} | {t.Comparison} |", markdown));
            Assert.Contains("| products | 2 |", markdown);

            var charts = Directory.GetFiles(output, "*.png");
            Assert.Equal(2 * expected.Length, charts.Length);
            foreach (var chart in charts)
            {
                Assert.Contains($"]({Path.GetFileName(chart)})", markdown);
                var header = new byte[8];
                await using var file = File.OpenRead(chart);
                await file.ReadExactlyAsync(header, Cancel);
                Assert.Equal(new byte[] { 0x89, (byte)'P', (byte)'N', (byte)'G', 0x0D, 0x0A, 0x1A, 0x0A }, header);
            }
        }
        finally
        {
            Directory.Delete(output, recursive: true);
        }
    }
}
