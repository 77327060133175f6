using System.Text;

namespace HttpPerf.Tests.Infrastructure;

/// <summary>
/// One exported metric point: the service that sent it, the metric, its attributes, and its value: for a
/// histogram, <paramref name="Value"/> is the count of measurements and <paramref name="Sum"/> their sum.
/// </summary>
public sealed record MetricPoint(string Service, string Metric, IReadOnlyDictionary<string, string> Attributes, double Value, double Sum)
{
    public string? this[string attribute] => Attributes.GetValueOrDefault(attribute);
}

/// <summary>
/// Reads the data points out of OTLP/HTTP protobuf metric exports (<c>ExportMetricsServiceRequest</c>), with a
/// protobuf wire reader of its own, so a test can ask "did this service export this metric with these
/// attributes" rather than search the bytes. Field numbers are those of opentelemetry-proto's metrics.proto.
/// </summary>
public static class OtlpMetrics
{
    public static IEnumerable<MetricPoint> Points(byte[] exportRequest)
    {
        foreach (var resourceMetrics in Messages(exportRequest, 1))
        {
            var service = Messages(resourceMetrics, 1).SelectMany(resource => Attributes(resource, 1))
                .FirstOrDefault(a => a.Key == "service.name").Value ?? "";
            foreach (var metric in Messages(resourceMetrics, 2).SelectMany(scope => Messages(scope, 2)))
            {
                var name = Encoding.UTF8.GetString(Messages(metric, 1).FirstOrDefault().Span);
                // gauge = 5 and sum = 7 hold NumberDataPoints (attributes 7); histogram = 9 holds HistogramDataPoints (attributes 9, count 4, sum 5).
                foreach (var point in Messages(metric, 5).Concat(Messages(metric, 7)).SelectMany(data => Messages(data, 1)))
                {
                    var value = NumberValue(point);
                    yield return new MetricPoint(service, name, Attributes(point, 7), value, value);
                }

                foreach (var point in Messages(metric, 9).SelectMany(data => Messages(data, 1)))
                {
                    var fields = Fields(point);
                    yield return new MetricPoint(service, name, Attributes(point, 9),
                        fields.Where(f => f.Number == 4).Select(f => (double)f.Fixed).FirstOrDefault(),
                        fields.Where(f => f.Number == 5).Select(f => BitConverter.UInt64BitsToDouble(f.Fixed)).FirstOrDefault());
                }
            }
        }
    }

    private static Dictionary<string, string> Attributes(ReadOnlyMemory<byte> message, int field)
    {
        var attributes = new Dictionary<string, string>(StringComparer.Ordinal);
        foreach (var keyValue in Messages(message, field))
        {
            var key = Encoding.UTF8.GetString(Messages(keyValue, 1).FirstOrDefault().Span);
            // AnyValue: string_value = 1; other kinds are not needed here.
            var value = Messages(keyValue, 2).SelectMany(any => Messages(any, 1)).Select(v => Encoding.UTF8.GetString(v.Span)).FirstOrDefault();
            attributes[key] = value ?? "";
        }

        return attributes;
    }

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

    private static IEnumerable<ReadOnlyMemory<byte>> Messages(ReadOnlyMemory<byte> message, int field) =>
        Fields(message).Where(f => f.Number == field && f.WireType == 2).Select(f => f.Bytes);

    private readonly record struct Field(int Number, int WireType, ulong Fixed, ReadOnlyMemory<byte> Bytes);

    private static List<Field> Fields(ReadOnlyMemory<byte> message)
    {
        var fields = new List<Field>();
        var span = message.Span;
        var position = 0;
        while (position < span.Length)
        {
            var tag = Varint(span, ref position);
            int number = (int)(tag >> 3), wireType = (int)(tag & 7);
            switch (wireType)
            {
                case 0:
                    fields.Add(new Field(number, wireType, Varint(span, ref position), default));
                    break;
                case 1:
                    fields.Add(new Field(number, wireType, BitConverter.ToUInt64(span.Slice(position, 8)), default));
                    position += 8;
                    break;
                case 2:
                    var length = (int)Varint(span, ref position);
                    fields.Add(new Field(number, wireType, 0, message.Slice(position, length)));
                    position += length;
                    break;
                case 5:
                    fields.Add(new Field(number, wireType, BitConverter.ToUInt32(span.Slice(position, 4)), default));
                    position += 4;
                    break;
                default:
                    throw new InvalidDataException($"Unsupported protobuf wire type {wireType} at byte {position}.");
            }
        }

        return fields;
    }

    private static ulong Varint(ReadOnlySpan<byte> span, ref int position)
    {
        ulong value = 0;
        for (var shift = 0; ; shift += 7)
        {
            var b = span[position++];
            value |= (ulong)(b & 0x7F) << shift;
            if (b < 0x80)
            {
                return value;
            }
        }
    }
}
