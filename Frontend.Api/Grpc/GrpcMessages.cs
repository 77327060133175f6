using System.Diagnostics;
using System.Diagnostics.Metrics;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.ServiceDefaults.Telemetry;

namespace Frontend.Api.Grpc;

/// <summary>
/// The lesson's telemetry, the same for every rung: each message the Catalog's call answered is one point of
/// <c>httpperf.grpc.message.size</c> (its bytes, tagged with the rung), so the dashboard shows one 19 MB message against
/// 86 of 225 KB; and the product list's server span says how many messages and bytes it took (<c>catalog.grpc.messages</c>,
/// <c>catalog.grpc.bytes</c>). Its page: docs/pitfalls/Frontend.Grpc.md.
/// </summary>
internal sealed class GrpcMessages(string variant)
{
    private static readonly Histogram<long> Size = PerfTelemetry.Meter.CreateHistogram<long>(
        "httpperf.grpc.message.size", "By", "Bytes of each message Frontend.Api's gRPC calls to the Catalog received.",
        advice: new InstrumentAdvice<long> { HistogramBucketBoundaries = [1_024, 16_384, 65_536, 131_072, 262_144, 524_288, 1_048_576, 4_194_304, 8_388_608, 16_777_216, 25_165_824, 33_554_432, 67_108_864] });

    private readonly KeyValuePair<string, object?>[] _tags = [new(PerfTelemetry.FlagTag, Pitfalls.FrontendGrpc), new(PerfTelemetry.VariantTag, variant)];
    private long _messages;
    private long _bytes;

    public void Received(long bytes)
    {
        _messages++;
        _bytes += bytes;
        Size.Record(bytes, _tags);
    }

    /// <summary>Tags the product list's span with the messages and bytes its call took.</summary>
    public void Complete()
    {
        Activity.Current?.SetTag("catalog.grpc.messages", _messages);
        Activity.Current?.SetTag("catalog.grpc.bytes", _bytes);
    }
}
