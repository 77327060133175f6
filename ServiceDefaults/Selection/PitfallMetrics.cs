using System.Diagnostics.Metrics;
using System.Diagnostics;
using HttpPerf.ServiceDefaults.Telemetry;
using Microsoft.AspNetCore.Http;

namespace HttpPerf.ServiceDefaults.Selection;

/// <summary>
/// The meters that show each pitfall's lesson, recorded once per request that a pitfall served, tagged with
/// the flag and the variant (<c>perf.flag</c>, <c>perf.variant</c>), the whole request's mode (<c>perf.mode</c>)
/// and the route, so the dashboard can put naive and optimized side by side: when the first byte left, how many
/// bytes went out in how many flushes, and how much of the body the request held whole in memory or in a temp file.
/// </summary>
internal static class PitfallMetrics
{
    private static readonly Histogram<double> TimeToFirstByte = PerfTelemetry.Meter.CreateHistogram<double>(
        "httpperf.server.time_to_first_byte", "s", "From the request reaching the service to its response starting (headers and first bytes handed to the server).",
        advice: new InstrumentAdvice<double> { HistogramBucketBoundaries = PerfTelemetry.DurationBuckets });

    private static readonly Histogram<long> BodySize = PerfTelemetry.Meter.CreateHistogram<long>(
        "http.server.response.body.size", "By", "Size of the response body the handler wrote.",
        advice: new InstrumentAdvice<long> { HistogramBucketBoundaries = SizeBuckets });

    private static readonly Histogram<long> Flushes = PerfTelemetry.Meter.CreateHistogram<long>(
        "httpperf.server.response.flushes", "{flush}", "Flushes that carried body bytes to the server: each is at least one HTTP chunk and one send.",
        advice: new InstrumentAdvice<long> { HistogramBucketBoundaries = [1, 10, 100, 1_000, 10_000, 100_000] });

    private static readonly Histogram<long> Buffered = PerfTelemetry.Meter.CreateHistogram<long>(
        "httpperf.server.request.buffered", "By", "Body bytes one request held whole, by where (perf.buffer: memory or temp_file); 0 when it streamed.",
        advice: new InstrumentAdvice<long> { HistogramBucketBoundaries = SizeBuckets });

    private static long[] SizeBuckets => [0, 64 * 1024, 1 << 20, 10 << 20, 30 << 20, 100 << 20, 1 << 30];

    public static void RecordFirstByte(HttpContext context, RequestVariants variants, long startTimestamp)
    {
        if (variants.Own is { } own)
        {
            TimeToFirstByte.Record(Stopwatch.GetElapsedTime(startTimestamp).TotalSeconds, Tags(context, own, variants.Mode));
        }
    }

    public static void RecordEnd(HttpContext context, RequestVariants variants, CountingResponseBody body)
    {
        if (variants.Own is not { } own)
        {
            return;
        }

        var tags = Tags(context, own, variants.Mode);
        BodySize.Record(body.Bytes, tags);
        Flushes.Record(body.Flushes, tags);

        var memory = tags;
        memory.Add(PerfTelemetry.BufferTag, "memory");
        Buffered.Record(variants.BufferedInMemory, memory);
        var tempFile = tags;
        tempFile.Add(PerfTelemetry.BufferTag, "temp_file");
        Buffered.Record(variants.BufferedInTempFile, tempFile);
    }

    private static TagList Tags(HttpContext context, (string Flag, string Variant) own, string? mode)
    {
        var tags = new TagList
        {
            { PerfTelemetry.FlagTag, own.Flag },
            { PerfTelemetry.VariantTag, own.Variant },
            { "http.route", (context.GetEndpoint() as Microsoft.AspNetCore.Routing.RouteEndpoint)?.RoutePattern.RawText },
        };
        if (mode is not null)
        {
            tags.Add(PerfTelemetry.ModeTag, mode);
        }

        return tags;
    }
}
