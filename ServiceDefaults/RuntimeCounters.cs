using System.Diagnostics;

namespace HttpPerf.ServiceDefaults;

/// <summary>A process's runtime counters since it started, for before/after comparisons.</summary>
public sealed record RuntimeCounters(long AllocatedBytes, int Gen0Collections, int Gen1Collections, int Gen2Collections, double CpuSeconds, long WorkingSetBytes)
{
    public static RuntimeCounters Read()
    {
        using var process = Process.GetCurrentProcess();
        return new RuntimeCounters(
            GC.GetTotalAllocatedBytes(precise: true),
            GC.CollectionCount(0),
            GC.CollectionCount(1),
            GC.CollectionCount(2),
            process.TotalProcessorTime.TotalSeconds,
            process.WorkingSet64);
    }
}
