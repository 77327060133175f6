using System.Diagnostics;
using Microsoft.AspNetCore.Builder;

namespace HttpPerf.ServiceDefaults.Telemetry;

/// <summary>
/// A process's runtime counters since it started, for before/after comparisons. <see cref="ActiveRequests"/>
/// counts requests still inside the pipeline, the <c>/runtime</c> call itself included: a request stuck
/// after its client left never leaves it. <see cref="ResponseBodyBytes"/> and <see cref="ResponseWrites"/> add
/// up what handlers wrote and in how many flushes (each an HTTP chunk and a send): their ratio is the mean write.
/// <see cref="JitSeconds"/> is the time spent compiling methods: still rising, the process is not warm yet.
/// <see cref="ServedRequests"/> counts the requests a pitfall served (the lessons' routes: not probes, /runtime or /flags),
/// however they ended: a Catalog replica's count is the Catalog calls it took.
/// <see cref="GcHeapBytes"/> is the heap after the last collection and <see cref="GcHeapLimitBytes"/> the most it may
/// take; <see cref="MemoryLimitBytes"/> and <see cref="MemoryUsageBytes"/> are the process's cgroup's (<see cref="MemoryLimit"/>).
/// </summary>
public sealed record RuntimeCounters(long AllocatedBytes, int Gen0Collections, int Gen1Collections, int Gen2Collections, double CpuSeconds, long WorkingSetBytes, long ActiveRequests, long ResponseBodyBytes, long ResponseWrites, double JitSeconds, long ServedRequests,
    long GcHeapBytes = 0, long GcHeapLimitBytes = 0, long? MemoryLimitBytes = null, long? MemoryUsageBytes = null)
{
    private static long s_served;
    private static long s_active;
    private static long s_responseBytes;
    private static long s_responseWrites;
    private static long s_allocatedHighWater;

    internal static void AddResponse(long bytes, long writes, bool served)
    {
        if (served)
        {
            Interlocked.Increment(ref s_served);
        }

        Interlocked.Add(ref s_responseBytes, bytes);
        Interlocked.Add(ref s_responseWrites, writes);
    }

    public static RuntimeCounters Read()
    {
        using var process = Process.GetCurrentProcess();
        return new RuntimeCounters(
            AllocatedSoFar(),
            GC.CollectionCount(0),
            GC.CollectionCount(1),
            GC.CollectionCount(2),
            process.TotalProcessorTime.TotalSeconds,
            process.WorkingSet64,
            Interlocked.Read(ref s_active),
            Interlocked.Read(ref s_responseBytes),
            Interlocked.Read(ref s_responseWrites),
            System.Runtime.JitInfo.GetCompilationTime().TotalSeconds,
            Interlocked.Read(ref s_served),
            GC.GetGCMemoryInfo().HeapSizeBytes,
            MemoryLimit.GcHeapLimitBytes,
            MemoryLimit.LimitBytes,
            MemoryLimit.UsageBytes);
    }

    /// <summary>
    /// Bytes allocated since start, never less than an earlier answer. Under Server GC's dynamic heap count (DATAS)
    /// the runtime's total drops while a heap is decommissioned, and rises again when it returns
    /// (dotnet/runtime#131069): a bench phase then measured the naive Gateway at -12.5 MB a request.
    /// </summary>
    private static long AllocatedSoFar()
    {
        var now = GC.GetTotalAllocatedBytes(precise: true);
        var seen = Interlocked.Read(ref s_allocatedHighWater);
        while (now > seen && Interlocked.CompareExchange(ref s_allocatedHighWater, now, seen) != seen)
        {
            seen = Interlocked.Read(ref s_allocatedHighWater);
        }

        return Math.Max(now, seen);
    }

    /// <summary>Counts every request from here to the end of the pipeline, however it ends.</summary>
    internal static IApplicationBuilder UseActiveRequestCount(IApplicationBuilder app) => app.Use(async (context, next) =>
    {
        Interlocked.Increment(ref s_active);
        try
        {
            await next(context);
        }
        finally
        {
            Interlocked.Decrement(ref s_active);
        }
    });
}
