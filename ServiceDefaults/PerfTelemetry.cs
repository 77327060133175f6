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

    /// <summary>Metric tag naming the pitfall flag (<c>Catalog.Serialization</c>) whose variant served a request.</summary>
    public const string FlagTag = "perf.flag";

    /// <summary>Metric tag saying where a request held a body whole: <c>memory</c> or <c>temp_file</c>.</summary>
    public const string BufferTag = "perf.buffer";
}
