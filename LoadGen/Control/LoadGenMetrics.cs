using System.Diagnostics.Metrics;
using System.Diagnostics;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.ServiceDefaults.Telemetry;
using HttpPerf.ServiceDefaults;
using LoadGen.Load;

namespace LoadGen.Control;

/// <summary>LoadGen's own metrics for the dashboard: what it sends, how it fares, by mode.</summary>
public sealed class LoadGenMetrics
{
    private readonly Counter<long> _requests = PerfTelemetry.Meter.CreateCounter<long>("httpperf.loadgen.requests", description: "Requests LoadGen completed, by mode and outcome.");
    private readonly Histogram<double> _latency = PerfTelemetry.Meter.CreateHistogram<double>("httpperf.loadgen.latency", "s", "Latency from each request's intended start, by mode.");

    public LoadGenMetrics(Func<double> rate, Func<long> inFlight)
    {
        PerfTelemetry.Meter.CreateObservableGauge("httpperf.loadgen.rate", rate, "{request}/s", "Target arrival rate.");
        PerfTelemetry.Meter.CreateObservableGauge("httpperf.loadgen.in_flight", inFlight, "{request}", "Requests outstanding.");
    }

    /// <summary>
    /// One request, keyed "scenario/mode". In follow-flags mode the variant tag is what served it (from the
    /// response's <c>X-Perf-Variants</c>), so a flag flip shows as a new series.
    /// </summary>
    public void Record(string key, string servedBy, TimeSpan latency, bool ok)
    {
        var (scenario, mode) = key.Split('/', 2) is [var s, var m] ? (s, m) : (key, ModeControl.FollowFlags);
        var tags = new TagList
        {
            { "scenario", scenario },
            { PerfTelemetry.VariantTag, mode == ModeControl.FollowFlags ? PerfMode.Summarize(servedBy) : mode },
        };
        _latency.Record(latency.TotalSeconds, tags);
        tags.Add("outcome", ok ? "ok" : "error");
        _requests.Add(1, tags);
    }
}
