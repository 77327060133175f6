using System.Diagnostics.Metrics;

namespace HttpPerf.ServiceDefaults.Telemetry;

/// <summary>
/// This process's memory against the limit it runs under: its cgroup's limit and usage, as the kernel counts them when
/// it decides to kill (a container's <c>--memory</c>, a pod's <c>resources.limits.memory</c>), and the GC heap's own
/// limit (75% of the cgroup's by default; container mode sets 50%). Reported as gauges, so the dashboard charts each replica's memory against
/// its limit (docs/memory.md), and in <c>/runtime</c> for the bench. Where no limit is set (a process on a machine),
/// the limit reads null and no limit is charted.
/// </summary>
public static class MemoryLimit
{
    // cgroup v1's "no limit": the largest multiple of the page size.
    private const long Unlimited = 0x7FFF_FFFF_FFFF_F000;

    private static readonly Lazy<string?> Folder = new(FindFolder);
    private static readonly bool V2 = File.Exists("/sys/fs/cgroup/cgroup.controllers");
    private static int s_gauges;

    /// <summary>The cgroup's memory limit in bytes; null when there is none.</summary>
    public static long? LimitBytes => Read(V2 ? "memory.max" : "memory.limit_in_bytes") is { } limit && limit < Unlimited ? limit : null;

    /// <summary>The cgroup's memory in use in bytes (page cache included, as the kernel counts it against the limit).</summary>
    public static long? UsageBytes => Read(V2 ? "memory.current" : "memory.usage_in_bytes");

    /// <summary>The most the cgroup has held since it began (cgroup v1 always; v2 from kernel 5.19).</summary>
    public static long? PeakBytes => Read(V2 ? "memory.peak" : "memory.max_usage_in_bytes");

    /// <summary>The most the GC may commit for its heap: its hard limit, 75% of the cgroup's by default (container mode sets 50%).</summary>
    public static long GcHeapLimitBytes => GC.GetGCMemoryInfo().TotalAvailableMemoryBytes;

    /// <summary>
    /// Gauges on <see cref="PerfTelemetry.Meter"/>: <c>httpperf.memory.usage</c>, and where there is a limit
    /// <c>httpperf.memory.limit</c> and <c>httpperf.memory.utilization</c> (usage over limit, the one chart that shows a
    /// replica against its limit).
    /// </summary>
    public static void AddGauges()
    {
        // Once per process: the meter is static, and a test host may add the service defaults more than once.
        if (Interlocked.Exchange(ref s_gauges, 1) == 1)
        {
            return;
        }

        PerfTelemetry.Meter.CreateObservableGauge("httpperf.memory.limit", () => LimitBytes is { } limit ? [new Measurement<long>(limit)] : Array.Empty<Measurement<long>>(),
            unit: "By", description: "The memory limit of this replica's cgroup (a container's --memory): past it the kernel kills the process.");
        PerfTelemetry.Meter.CreateObservableGauge("httpperf.memory.usage", () => UsageBytes is { } usage ? [new Measurement<long>(usage)] : Array.Empty<Measurement<long>>(),
            unit: "By", description: "Memory this replica's cgroup holds, as the kernel counts it against the limit.");
        PerfTelemetry.Meter.CreateObservableGauge("httpperf.memory.utilization",
            () => (UsageBytes, LimitBytes) is ({ } usage, { } limit) ? [new Measurement<double>((double)usage / limit)] : Array.Empty<Measurement<double>>(),
            unit: "1", description: "This replica's memory as a share of its limit: at 1 the kernel kills it. One replica's chart: pick the replica, not the service (the service's adds its replicas up).");
    }

    private static long? Read(string file)
    {
        if (Folder.Value is not { } folder)
        {
            return null;
        }

        try
        {
            var text = File.ReadAllText(Path.Combine(folder, file)).Trim();
            return text == "max" ? long.MaxValue : long.TryParse(text, out var value) ? value : null;
        }
        catch (IOException)
        {
            return null;
        }
        catch (UnauthorizedAccessException)
        {
            return null;
        }
    }

    // The folder of this process's memory cgroup. A container sees its own at the mount's root; a process on the
    // machine finds its path in /proc/self/cgroup ("0::/path" on v2, "N:memory:/path" on v1) below the mount.
    private static string? FindFolder()
    {
        var mount = V2 ? "/sys/fs/cgroup" : "/sys/fs/cgroup/memory";
        if (!Directory.Exists(mount))
        {
            return null;
        }

        try
        {
            var line = File.ReadLines("/proc/self/cgroup")
                .FirstOrDefault(l => V2 ? l.StartsWith("0::", StringComparison.Ordinal) : l.Split(':') is [_, var controllers, _] && controllers.Split(',').Contains("memory"));
            var path = line?[(line.IndexOf(':', line.IndexOf(':') + 1) + 1)..].TrimStart('/');
            var own = path is { Length: > 0 } ? Path.Combine(mount, path) : mount;
            return Directory.Exists(own) ? own : mount;
        }
        catch (IOException)
        {
            return mount;
        }
    }
}
