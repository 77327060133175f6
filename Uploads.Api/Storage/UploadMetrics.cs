using System.Diagnostics.Metrics;
using HttpPerf.ServiceDefaults.Telemetry;
using HttpPerf.ServiceDefaults;

namespace Uploads.Api.Storage;

/// <summary>Upload metrics, tagged with the variant that served them, for the dashboard.</summary>
public sealed class UploadMetrics
{
    private readonly Counter<long> _received = PerfTelemetry.Meter.CreateCounter<long>("httpperf.upload.received", "By", "File bytes stored by POST /uploads.");
    private readonly Histogram<double> _duration = PerfTelemetry.Meter.CreateHistogram<double>("httpperf.upload.duration", "s", "Time to receive and store the files of one request.");
    private readonly Counter<long> _spooled = PerfTelemetry.Meter.CreateCounter<long>("httpperf.upload.spooled", "By", "File bytes buffered in temp files before the handler saw them (IFormFile).");

    public void Uploaded(long bytes, TimeSpan elapsed, string variant)
    {
        var tag = new KeyValuePair<string, object?>(PerfTelemetry.VariantTag, variant);
        _received.Add(bytes, tag);
        _duration.Record(elapsed.TotalSeconds, tag);
    }

    public void Spooled(long bytes) => _spooled.Add(bytes, new KeyValuePair<string, object?>(PerfTelemetry.VariantTag, "naive"));
}
