using static HttpPerf.Tests.Infrastructure.Protobuf;

namespace HttpPerf.Tests.Infrastructure;

/// <summary>
/// One exported metric point: the service that sent it, the metric, its attributes, and its value: for a
/// histogram, <paramref name="Value"/> is the count of measurements and <paramref name="Sum"/> their sum.
/// </summary>
public sealed record MetricPoint(string Service, string Metric, IReadOnlyDictionary<string, string> Attributes, double Value, double Sum)
{
    public string? this[string attribute] => Attributes.GetValueOrDefault(attribute);

    /// <summary>An explicit-bucket histogram's bucket bounds; empty for other points.</summary>
    public IReadOnlyList<double> Bounds { get; init; } = [];

    /// <summary>Whether the point came from an exponential histogram (metric field 10).</summary>
    public bool Exponential { get; init; }

    /// <summary>Where the point's interval starts (<c>start_time_unix_nano</c>): for a cumulative point, where the dashboard draws its first value.</summary>
    public DateTime Start { get; init; }
}

/// <summary>
/// Reads the data points out of OTLP/HTTP protobuf metric exports (<c>ExportMetricsServiceRequest</c>), with a
/// protobuf wire reader (<see cref="Protobuf"/>), so a test can ask "did this service export this metric with these
/// attributes" rather than search the bytes. Field numbers are those of opentelemetry-proto's metrics.proto.
/// </summary>
public static class OtlpMetrics
{
    public static IEnumerable<MetricPoint> Points(byte[] exportRequest)
    {
        foreach (var resourceMetrics in Messages(exportRequest, 1))
        {
            var service = Messages(resourceMetrics, 1).Select(ServiceName).FirstOrDefault() ?? "";
            foreach (var metric in Messages(resourceMetrics, 2).SelectMany(scope => Messages(scope, 2)))
            {
                var name = String(metric, 1);
                // gauge = 5 and sum = 7 hold NumberDataPoints (attributes 7); histogram = 9 holds HistogramDataPoints (attributes 9, count 4, sum 5).
                foreach (var point in Messages(metric, 5).Concat(Messages(metric, 7)).SelectMany(data => Messages(data, 1)))
                {
                    var value = NumberValue(point);
                    yield return new MetricPoint(service, name, Attributes(point, 7), value, value) { Start = Time(point, 2) };
                }

                foreach (var point in Messages(metric, 9).SelectMany(data => Messages(data, 1)))
                {
                    var fields = Fields(point);
                    yield return new MetricPoint(service, name, Attributes(point, 9),
                        fields.Where(f => f.Number == 4).Select(f => (double)f.Fixed).FirstOrDefault(),
                        fields.Where(f => f.Number == 5).Select(f => BitConverter.UInt64BitsToDouble(f.Fixed)).FirstOrDefault())
                    {
                        Bounds = Doubles(fields, 7),
                        Start = Time(point, 2),
                    };
                }

                // exponential_histogram = 10 holds ExponentialHistogramDataPoints (attributes 1, count 4, sum 5).
                foreach (var point in Messages(metric, 10).SelectMany(data => Messages(data, 1)))
                {
                    var fields = Fields(point);
                    yield return new MetricPoint(service, name, Attributes(point, 1),
                        fields.Where(f => f.Number == 4).Select(f => (double)f.Fixed).FirstOrDefault(),
                        fields.Where(f => f.Number == 5).Select(f => BitConverter.UInt64BitsToDouble(f.Fixed)).FirstOrDefault())
                    {
                        Exponential = true,
                        Start = Time(point, 2),
                    };
                }
            }
        }
    }


    /// <summary>A repeated double field, packed (wire type 2) or not (wire type 1).</summary>
    private static double[] Doubles(List<Field> fields, int number) =>
        fields.Where(f => f.Number == number).SelectMany(f => f.WireType == 1
            ? [BitConverter.UInt64BitsToDouble(f.Fixed)]
            : Enumerable.Range(0, f.Bytes.Length / 8).Select(i => BitConverter.ToDouble(f.Bytes.Span.Slice(i * 8, 8)))).ToArray();

    private static double NumberValue(ReadOnlyMemory<byte> point)
    {
        foreach (var field in Fields(point))
        {
            switch (field.Number)
            {
                case 4: return BitConverter.UInt64BitsToDouble(field.Fixed); // as_double
                case 6: return (long)field.Fixed; // as_int
            }
        }

        return 0;
    }
}
