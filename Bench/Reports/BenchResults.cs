using Bench.Benches;
using System.Runtime.InteropServices;

namespace Bench.Reports;

/// <summary>
/// One measured phase: a scenario in one mode at one concurrency. Latency is from HdrHistogram; the
/// per-service figures come from each process's <c>/runtime</c> counters and a 50 ms sampler.
/// </summary>
public sealed record PhaseResult(
    string Scenario,
    string Mode,
    int Concurrency,
    long Requests,
    long Errors,
    long ResponseBytes,
    long RequestBytes,
    double P50Ms,
    double P90Ms,
    double P99Ms,
    double FirstByteP50Ms,
    double Seconds,
    IReadOnlyDictionary<string, ServiceFigures> Services,
    IReadOnlyList<PercentilePoint> Latency,
    IReadOnlyList<WorkingSetPoint> WorkingSet)
{
    /// <summary>Payload moved (response or upload body) in MiB per second of the phase's wall time.</summary>
    public double MiBPerSecond => Seconds <= 0 ? 0 : (ResponseBytes + RequestBytes) * (double)Requests / 1_048_576 / Seconds;

    public double RequestsPerSecond => Seconds <= 0 ? 0 : Requests / Seconds;
}

/// <summary>
/// What one service spent in a phase; <paramref name="MeanWriteBytes"/> is the size of its response writes (body bytes
/// per flush: each flush is an HTTP chunk and a send), 0 where it wrote no body.
/// </summary>
public sealed record ServiceFigures(long PeakWorkingSetBytes, long AllocatedBytesPerRequest, double CpuMsPerRequest, long PeakTempBytes, long MeanWriteBytes = 0);

public sealed record PercentilePoint(double Percentile, double Ms);

/// <summary>Working set in bytes of the scenario's services, summed, at a moment of the phase.</summary>
public sealed record WorkingSetPoint(double Seconds, long Bytes);

/// <summary>One of the project's targets, checked against a ratio measured in the same run.</summary>
/// <remarks><see cref="Met"/> is null when the run did not measure what the target compares.</remarks>
public sealed record TargetCheck(string Target, string Comparison, double? Measured, double Goal, bool AtMost, bool? Met)
{
    public static TargetCheck AtMostOf(string target, string comparison, double? measured, double goal) =>
        new(target, comparison, measured, goal, AtMost: true, measured is { } m && double.IsFinite(m) ? m <= goal : null);

    public static TargetCheck AtLeastOf(string target, string comparison, double? measured, double goal) =>
        new(target, comparison, measured, goal, AtMost: false, measured is { } m && double.IsFinite(m) ? m >= goal : null);
}

/// <summary>What a run ran on: the OS, cores, runtime, the configuration the services were built in, and when it started.</summary>
public sealed record MachineInfo(string Os, int Cores, string Runtime, string Configuration, DateTimeOffset Started)
{
    /// <summary>This machine, now, with services built in <paramref name="configuration"/>.</summary>
    public static MachineInfo Now(string configuration) =>
        new(RuntimeInformation.OSDescription, Environment.ProcessorCount, RuntimeInformation.FrameworkDescription, configuration, DateTimeOffset.UtcNow);
}

public sealed record BenchResult(MachineInfo Machine, BenchOptions Options, IReadOnlyList<PhaseResult> Phases, IReadOnlyList<TargetCheck> Targets);

public static class PhaseResults
{
    /// <summary>The phase of <paramref name="scenario"/> in <paramref name="mode"/> at <paramref name="concurrency"/>, if the run has one.</summary>
    public static PhaseResult? Find(this IEnumerable<PhaseResult> phases, string scenario, string mode, int concurrency) =>
        phases.FirstOrDefault(p => p.Scenario == scenario && p.Mode == mode && p.Concurrency == concurrency);
}
