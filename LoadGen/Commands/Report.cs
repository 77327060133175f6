using LoadGen.Load;
using static System.FormattableString;

namespace LoadGen.Commands;

/// <summary>Plain Markdown tables, so a run can be pasted into a README or an issue.</summary>
internal static class Report
{
    public static void PrintLatency(Uri target, string path, IReadOnlyList<ModeStats> stats)
    {
        Console.WriteLine($"GET {new Uri(target, path)}");
        Console.WriteLine("| scenario/mode | requests | errors | body bytes | first byte p50 ms | p50 ms | p90 ms | p99 ms |");
        Console.WriteLine("|---|---:|---:|---:|---:|---:|---:|---:|");
        foreach (var s in stats)
        {
            Console.WriteLine(Invariant($"| {s.Mode} | {s.Count} | {s.Errors} | {s.MeanBodyBytes:N0} | {s.FirstBytePercentileMs(50):F1} | {s.PercentileMs(50):F1} | {s.PercentileMs(90):F1} | {s.PercentileMs(99):F1} |"));
        }
    }

    public static void PrintPhases(string path, int concurrency, IReadOnlyList<(ModeStats Stats, IReadOnlyDictionary<string, long> PeakWorkingSet)> phases)
    {
        var services = phases[0].PeakWorkingSet.Keys.ToList();
        Console.WriteLine($"GET {path} through the Gateway, concurrency {concurrency}, one phase per mode");
        Console.WriteLine($"| mode | requests | errors | body bytes | p50 ms | p99 ms | {string.Join(" | ", services.Select(s => $"peak WS {s} MB"))} |");
        Console.WriteLine($"|---|---:|---:|---:|---:|---:|{string.Concat(services.Select(_ => "---:|"))}");
        foreach (var (s, peaks) in phases)
        {
            var ws = string.Join(" | ", services.Select(name => Invariant($"{peaks[name] / 1048576.0:F0}")));
            Console.WriteLine(Invariant($"| {s.Mode} | {s.Count} | {s.Errors} | {s.MeanBodyBytes:N0} | {s.PercentileMs(50):F0} | {s.PercentileMs(99):F0} | {ws} |"));
        }

        if (phases.Count == 2)
        {
            var (optimized, naive) = (phases[0], phases[1]);
            var ratios = string.Join(" | ", services.Select(name => Invariant($"{(double)optimized.PeakWorkingSet[name] / naive.PeakWorkingSet[name]:F2}")));
            Console.WriteLine(Invariant($"| optimized / naive | | | | {optimized.Stats.PercentileMs(50) / naive.Stats.PercentileMs(50):F2} | {optimized.Stats.PercentileMs(99) / naive.Stats.PercentileMs(99):F2} | {ratios} |"));
        }
    }
}
