using System.Diagnostics;
using System.Diagnostics.Metrics;

namespace HttpPerf.ServiceDefaults.Telemetry;

/// <summary>The telemetry names every service shares, so the dashboard shows one vocabulary.</summary>
public static class PerfTelemetry
{
    public const string ActivitySourceName = "HttpPerf";
    public const string MeterName = "HttpPerf";

    public static readonly ActivitySource ActivitySource = new(ActivitySourceName);
    public static readonly Meter Meter = new(MeterName);

    /// <summary>
    /// The activity of Frontend.Api's probe of a Catalog replica it left out (Frontend.Api/Replicas/ReplicaSet.cs): a
    /// root of its own, dropped by the sampler as YARP's health checks are, with the probe's HttpClient span under it.
    /// </summary>
    public const string ReplicaProbeActivity = "catalog.replica_probe";

    /// <summary>Span attribute listing the <c>flag=variant</c> pairs that served a request.</summary>
    public const string VariantsTag = "perf.variants";

    /// <summary>Metric tag naming the variant (<c>naive</c> or <c>optimized</c>) that produced a measurement.</summary>
    public const string VariantTag = "perf.variant";

    /// <summary>Metric tag naming the pitfall flag (<c>Catalog.Serialization</c>) whose variant served a request.</summary>
    public const string FlagTag = "perf.flag";

    /// <summary>Metric tag saying where a request held a body whole: <c>memory</c> or <c>temp_file</c>.</summary>
    public const string BufferTag = "perf.buffer";

    /// <summary>
    /// Metric tag and span attribute naming the mode of the whole request, across every hop that served it
    /// (<see cref="Flags.PerfMode.Summarize"/>): a variant's name when all hops served that variant, else <c>mixed</c>.
    /// </summary>
    public const string ModeTag = "perf.mode";

    /// <summary>
    /// Bucket bounds (seconds) of every request-duration histogram: no more than 1.5x apart from 10 ms to 10 s.
    /// The dashboard reads a percentile as the upper bound of the bucket it falls in, so it is now within 1.5x of
    /// the truth. ASP.NET Core's default bounds (5, 10, 25, 50, 75, 100, 250, 500, 750 ms, 1, 2.5, 5, 7.5, 10 s) are
    /// up to 2.5x apart: a 0.3 s optimized and a 0.7 s naive catalog read 0.5 s and 0.75 s (1.5x, not 2.3x), and a
    /// 1.1 s and a 2.4 s product list both read 2.5 s. The cost is
    /// bytes, not series: every exported point carries 30 bucket counts and 29 bounds instead of 15 and 14 (15 more
    /// doubles and 15 more varints, about 140 bytes, in OTLP protobuf); a Prometheus scrape would show 32 series per
    /// histogram instead of 17.
    /// </summary>
    public static readonly double[] DurationBuckets =
    [
        0.001, 0.002, 0.005,
        0.01, 0.015, 0.02, 0.03, 0.04, 0.05, 0.07,
        0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.7,
        1, 1.5, 2, 3, 4, 5, 7,
        10, 15, 20, 30, 60,
    ];

    /// <summary>The duration histograms that use <see cref="DurationBuckets"/>: the server's and the client's request duration.</summary>
    public static readonly string[] DurationHistograms = ["http.server.request.duration", "http.client.request.duration"];
}
