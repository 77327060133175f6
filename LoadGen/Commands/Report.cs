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
}
