using System.Diagnostics.Metrics;
using HttpPerf.ServiceDefaults;

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

    public void Record(string mode, TimeSpan latency, bool ok)
    {
        var variant = new KeyValuePair<string, object?>(PerfTelemetry.VariantTag, mode);
        _requests.Add(1, variant, new("outcome", ok ? "ok" : "error"));
        _latency.Record(latency.TotalSeconds, variant);
    }
}
