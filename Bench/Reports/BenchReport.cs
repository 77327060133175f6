using static HttpPerf.Measurement.Figures;
using Bench.Benches;
using System.Text;

namespace Bench.Reports;

/// <summary>
/// A run's report.md (tables: naive, streaming where the lesson has it, optimized, their ratios, the baseline and the
/// ratio to it; the ladder of each lesson with a streaming rung, per rung and hop) and its charts, which
/// <see cref="ReportFiles"/> keeps beside report.json (every figure) in the output folder.
/// </summary>
public static class BenchReport
{
    /// <summary>The report of <paramref name="result"/>, made by <paramref name="command"/>: its charts written into <paramref name="folder"/>, and the Markdown that shows them.</summary>
    public static string Render(BenchResult result, string command, string folder) =>
        result.Options.Sweep is null
            ? Markdown(result, command, BenchCharts.Write(result, folder))
            : SweepReport.Markdown(result, command, BenchCharts.WriteSweep(result, folder));

    public static string Markdown(BenchResult result, string command, IReadOnlyDictionary<(string Scenario, int Concurrency), IReadOnlyList<string>> charts)
    {
        var o = result.Options;
        var md = MadeBy.Heading("Benchmark: naive, streaming, optimized and the static-bytes baseline", command, result.Machine, $"services built in {result.Machine.Configuration}");
        md.AppendLine(Invariant($"Catalog: {(o.ProductCount is { } n ? $"{n:N0} products" : "the default 86,000 products (about 25 MB of JSON)")}; uploads of {o.UploadMiB} MiB."));
        md.AppendLine();
        md.AppendLine("Every scenario ran on fresh service processes for naive, and on another fresh set for optimized, then baseline, then streaming where the lesson has that rung (the same processes, so the three compare on equal terms), with every flag set to the mode in the flags file (no header override; in streaming, the flags without that rung stay optimized), after warm-up requests per phase (--warmup seconds, at least two, then on while the services still spend over 3% of the time compiling, at most three times as long).");
        md.AppendLine("Latency is from the client, HdrHistogram; CPU and allocations are each service's own counters (`GET /runtime`) over the phase, divided by its requests;");
        md.AppendLine("temp-file bytes are the peak size of the service's `ASPNETCORE_TEMP` folder, sampled every 50 ms. One machine, one run: read the ratios.");
        md.AppendLine();

        md.AppendLine("## Targets");
        md.AppendLine();
        md.Append(Targets(result));

        md.AppendLine();
        md.AppendLine("## Summary");
        md.AppendLine();
        md.AppendLine("| scenario | in flight | p50 ms naive | p50 ms streaming | p50 ms optimized | optimized / naive | p50 ms baseline | optimized / baseline | first byte optimized / naive | peak working set optimized / naive | MiB/s optimized / naive |");
        md.AppendLine("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        foreach (var (scenario, concurrency) in Groups(result))
        {
            var (naive, streaming, optimized, baseline) = Modes(result, scenario, concurrency);
            md.AppendLine(Invariant($"| {scenario} | {concurrency} | {Ms(naive?.P50Ms)} | {Ms(streaming?.P50Ms)} | {Ms(optimized?.P50Ms)} | {Ratio(optimized?.P50Ms, naive?.P50Ms)} | {Ms(baseline?.P50Ms)} | {Ratio(optimized?.P50Ms, baseline?.P50Ms)} | {Ratio(optimized?.FirstByteP50Ms, naive?.FirstByteP50Ms)} | {Ratio(SumWorkingSet(optimized), SumWorkingSet(naive))} | {Ratio(optimized?.MiBPerSecond, naive?.MiBPerSecond)} |"));
        }

        var ladders = Groups(result).Where(g => result.Phases.Find(g.Scenario, BenchRunner.Streaming, g.Concurrency) is not null).ToList();
        if (ladders.Count > 0)
        {
            md.AppendLine();
            md.AppendLine("## Ladders: each rung, hop by hop");
            md.AppendLine();
            md.AppendLine("The scenarios whose lesson has a streaming rung: p50 from the client, then each hop's own CPU and allocations per request and peak working set over the phase.");
            foreach (var (scenario, concurrency) in ladders)
            {
                md.AppendLine();
                md.AppendLine(Invariant($"### {scenario}, {(concurrency == 1 ? "one request at a time" : $"{concurrency} in flight")}"));
                md.AppendLine();
                AppendLadder(md, result, scenario, concurrency);
            }
        }

        foreach (var (scenario, concurrency) in Groups(result))
        {
            var (naive, _, optimized, baseline) = Modes(result, scenario, concurrency);
            var any = (optimized ?? naive ?? baseline)!;
            md.AppendLine();
            md.AppendLine(Invariant($"## {scenario}, {(concurrency == 1 ? "one request at a time" : $"{concurrency} in flight")}, {any.Requests} requests per mode"));
            md.AppendLine();
            md.AppendLine(BenchScenarios.Find(scenario).Title);
            md.AppendLine();
            AppendFigures(md, result, scenario, concurrency, any.Services.Keys);

            if (charts.TryGetValue((scenario, concurrency), out var files))
            {
                md.AppendLine();
                md.AppendLine(string.Join(" ", files.Select(f => $"![{Path.GetFileNameWithoutExtension(f)}]({f})")));
            }
        }

        return md.ToString();
    }

    /// <summary>Each target, the ratio it holds, what this run measured, and whether it met it: the report's table, and the one docs/benchmarks.md quotes.</summary>
    public static string Targets(BenchResult result) => MarkdownTable.Of(
        "| target | ratio | measured | goal | met |",
        "|---|---|---:|---:|---|",
        result.Targets.Select(t => Invariant($"| {t.Target} | {t.Comparison} | {Number(t.Measured)} | {(t.AtMost ? "≤" : "≥")} {t.Goal} | {t.Met switch { true => "yes", false => "**no**", null => "not measured" }} |")));

    /// <summary>
    /// One scenario's figures side by side, naive | streaming (where the run has it) | optimized | ratios | baseline |
    /// ratio: the client's, then those of <paramref name="services"/>. The report's detail tables, and the tables docs embed.
    /// </summary>
    public static void AppendFigures(StringBuilder md, BenchResult result, string scenario, int concurrency, IEnumerable<string> services)
    {
        var (naive, streaming, optimized, baseline) = Modes(result, scenario, concurrency);
        var any = (optimized ?? naive ?? baseline)!;
        var ladder = streaming is not null;
        md.AppendLine(ladder
            ? "| figure | naive | streaming | optimized | streaming / naive | optimized / naive | baseline | optimized / baseline |"
            : "| figure | naive | optimized | optimized / naive | baseline | optimized / baseline |");
        md.AppendLine(ladder ? "|---|---:|---:|---:|---:|---:|---:|---:|" : "|---|---:|---:|---:|---:|---:|");
        void Row(string figure, Func<PhaseResult, double> value, Func<double?, string> format)
        {
            double? Of(PhaseResult? p) => p is null ? null : value(p);
            var middle = ladder ? $" {format(Of(streaming))} |" : "";
            var middleRatio = ladder ? $" {Ratio(Of(streaming), Of(naive))} |" : "";
            md.AppendLine($"| {figure} | {format(Of(naive))} |{middle} {format(Of(optimized))} |{middleRatio} {Ratio(Of(optimized), Of(naive))} | {format(Of(baseline))} | {Ratio(Of(optimized), Of(baseline))} |");
        }

        Row("errors", p => p.Errors, Count);
        Row(any.RequestBytes > 0 ? "request body MB" : "response body MB", p => (p.RequestBytes > 0 ? p.RequestBytes : p.ResponseBytes) / 1e6, Number);
        Row("p50 ms", p => p.P50Ms, Ms);
        Row("p90 ms", p => p.P90Ms, Ms);
        Row("p99 ms", p => p.P99Ms, Ms);
        Row("first byte p50 ms", p => p.FirstByteP50Ms, Ms);
        Row("throughput MiB/s", p => p.MiBPerSecond, Number);
        Row("throughput requests/s", p => p.RequestsPerSecond, Number);
        foreach (var service in services)
        {
            Row($"{service} peak working set MB", p => p.Services[service].PeakWorkingSetBytes / 1e6, Number);
            Row($"{service} allocated MB per request", p => p.Services[service].AllocatedBytesPerRequest / 1e6, Number);
            Row($"{service} CPU ms per request", p => p.Services[service].CpuMsPerRequest, Ms);
            Row($"{service} peak temp-file MB", p => p.Services[service].PeakTempBytes / 1e6, Number);
            Row($"{service} mean response write KB", p => p.Services[service].MeanWriteBytes / 1024.0, Number);
        }
    }

    /// <summary>One scenario's rungs hop by hop: p50, then each hop's CPU ms and allocated MB per request and peak working set.</summary>
    public static void AppendLadder(StringBuilder md, BenchResult result, string scenario, int concurrency)
    {
        md.AppendLine("| rung | p50 ms | hop | CPU ms per request | allocated MB per request | peak working set MB |");
        md.AppendLine("|---|---:|---|---:|---:|---:|");
        foreach (var mode in BenchRunner.Modes)
        {
            if (result.Phases.Find(scenario, mode, concurrency) is not { } phase)
            {
                continue;
            }

            foreach (var (hop, figures) in phase.Services)
            {
                md.AppendLine(Invariant($"| {mode} | {Ms(phase.P50Ms)} | {hop} | {Ms(figures.CpuMsPerRequest)} | {Number(figures.AllocatedBytesPerRequest / 1e6)} | {Number(figures.PeakWorkingSetBytes / 1e6)} |"));
            }
        }
    }

    internal static IEnumerable<(string Scenario, int Concurrency)> Groups(BenchResult result) =>
        result.Phases.Select(p => (p.Scenario, p.Concurrency)).Distinct();

    internal static (PhaseResult? Naive, PhaseResult? Streaming, PhaseResult? Optimized, PhaseResult? Baseline) Modes(BenchResult result, string scenario, int concurrency) =>
        (result.Phases.Find(scenario, BenchRunner.Naive, concurrency), result.Phases.Find(scenario, BenchRunner.Streaming, concurrency),
         result.Phases.Find(scenario, BenchRunner.Optimized, concurrency), result.Phases.Find(scenario, BenchRunner.Baseline, concurrency));

    private static double? SumWorkingSet(PhaseResult? phase) => phase?.Services.Values.Sum(s => (double)s.PeakWorkingSetBytes);
}
