using System.Diagnostics;
using System.Diagnostics.Metrics;

namespace HttpPerf.ServiceDefaults;

/// <summary>The telemetry names every service shares, so the dashboard shows one vocabulary.</summary>
public static class PerfTelemetry
{
    public const string ActivitySourceName = "HttpPerf";
    public const string MeterName = "HttpPerf";

    public static readonly ActivitySource ActivitySource = new(ActivitySourceName);
    public static readonly Meter Meter = new(MeterName);

    /// <summary>Span attribute listing the <c>flag=variant</c> pairs that served a request.</summary>
    public const string VariantsTag = "perf.variants";

    /// <summary>Metric tag naming the variant (<c>naive</c> or <c>optimized</c>) that produced a measurement.</summary>
    public const string VariantTag = "perf.variant";
}
