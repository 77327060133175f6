using Bench.Benches;

namespace Bench.Reports;

/// <summary>
/// A sweep's report: the product list at each point (catalog size, or requests in flight) in each mode, and
/// one line on how cost grows, the least-squares slope of latency and of peak working set over the points.
/// </summary>
public static class SweepReport
{
    /// <summary>Where a phase sits on the sweep's axis: MB of response body (size) or requests in flight (concurrency).</summary>
    public static double X(BenchResult result, PhaseResult phase) =>
        result.Options.Sweep == BenchRunner.SizeSweep ? phase.ResponseBytes / 1e6 : phase.Concurrency;

    public static string Axis(BenchResult result) =>
        result.Options.Sweep == BenchRunner.SizeSweep ? "MB of product list" : "requests in flight";

    /// <summary>Peak working set of every service on the path, summed, in MB.</summary>
    public static double PeakWorkingSetMb(PhaseResult phase) => phase.Services.Values.Sum(s => s.PeakWorkingSetBytes) / 1e6;

    /// <summary>Least-squares slope of <paramref name="y"/> over the sweep's axis, for one mode; null with fewer than two points.</summary>
    public static double? Slope(BenchResult result, string mode, Func<PhaseResult, double> y)
    {
        var points = result.Phases.Where(p => p.Mode == mode).Select(p => (X: X(result, p), Y: y(p))).ToList();
        if (points.Select(p => p.X).Distinct().Count() < 2)
        {
            return null;
        }

        var meanX = points.Average(p => p.X);
        var meanY = points.Average(p => p.Y);
        return points.Sum(p => (p.X - meanX) * (p.Y - meanY)) / points.Sum(p => (p.X - meanX) * (p.X - meanX));
    }

    public static string Markdown(BenchResult result, string command, IReadOnlyList<string> charts)
    {
        var size = result.Options.Sweep == BenchRunner.SizeSweep;
        var unit = size ? "MB" : "request in flight";
        var md = MadeBy.Heading($"Sweep: the product list over {(size ? "catalog size" : "requests in flight")}, naive vs optimized vs baseline", command, result.Machine,
            $"services built in {result.Machine.Configuration}");
        md.AppendLine("GET /api/products through Gateway → Frontend.Api → Catalog.Api; each point on fresh processes for naive and on another set for optimized then baseline, after warm-up requests per phase (--warmup seconds, at least two, then on while the services still spend over 3% of the time compiling, at most three times as long). One machine, one run: read the slopes and ratios.");
        md.AppendLine();
        var slopes = BenchRunner.Modes.Select(m => (Mode: m, Latency: Slope(result, m, p => p.P50Ms), Memory: Slope(result, m, PeakWorkingSetMb))).ToList();
        md.AppendLine("**How cost grows** (least-squares slope over the points), per " + unit + ": p50 latency " +
            string.Join(", ", slopes.Select(s => Invariant($"{s.Mode} {Figures.Number(s.Latency)} ms"))) + "; peak working set of the three services " +
            string.Join(", ", slopes.Select(s => Invariant($"{s.Mode} {Figures.Number(s.Memory)} MB"))) + ".");
        md.AppendLine();
        var services = result.Phases[0].Services.Keys.ToList();
        md.AppendLine($"| {Axis(result)} | in flight | mode | requests | errors | p50 ms | p99 ms | {string.Join(" | ", services.Select(s => $"{s} peak MB"))} | {string.Join(" | ", services.Select(s => $"{s} CPU ms/request"))} | {string.Join(" | ", services.Select(s => $"{s} allocated MB/request"))} |");
        md.AppendLine($"|---:|---:|---|---:|---:|---:|---:|{string.Concat(Enumerable.Repeat("---:|", services.Count * 3))}");
        foreach (var p in result.Phases.OrderBy(p => X(result, p)).ThenBy(p => Array.IndexOf(BenchRunner.Modes, p.Mode)))
        {
            md.AppendLine(Invariant($"| {Figures.Number(p.ResponseBytes / 1e6)} | {p.Concurrency} | {p.Mode} | {p.Requests} | {p.Errors} | {Figures.Ms(p.P50Ms)} | {Figures.Ms(p.P99Ms)} | ") +
                string.Join(" | ", services.Select(s => Figures.Number(p.Services[s].PeakWorkingSetBytes / 1e6))) + " | " +
                string.Join(" | ", services.Select(s => Figures.Ms(p.Services[s].CpuMsPerRequest))) + " | " +
                string.Join(" | ", services.Select(s => Figures.Number(p.Services[s].AllocatedBytesPerRequest / 1e6))) + " |");
        }

        md.AppendLine();
        md.AppendLine(string.Join(" ", charts.Select(f => $"![{Path.GetFileNameWithoutExtension(f)}]({f})")));
        return md.ToString();
    }
}
