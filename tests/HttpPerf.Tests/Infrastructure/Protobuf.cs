using System.Text;

namespace HttpPerf.Tests.Infrastructure;

/// <summary>
/// The protobuf wire format, read just far enough to walk OTLP exports: fields by number, nested messages,
/// and <c>KeyValue</c> attributes whose values are strings (other kinds read as empty).
/// </summary>
public static class Protobuf
{
    public readonly record struct Field(int Number, int WireType, ulong Fixed, ReadOnlyMemory<byte> Bytes);

    public static IEnumerable<ReadOnlyMemory<byte>> Messages(ReadOnlyMemory<byte> message, int field) =>
        Fields(message).Where(f => f.Number == field && f.WireType == 2).Select(f => f.Bytes);

    public static string String(ReadOnlyMemory<byte> message, int field) =>
        Encoding.UTF8.GetString(Messages(message, field).FirstOrDefault().Span);

    public static ulong Number(ReadOnlyMemory<byte> message, int field) =>
        Fields(message).Where(f => f.Number == field && f.WireType != 2).Select(f => f.Fixed).FirstOrDefault();

    /// <summary>A <c>fixed64</c> time in nanoseconds since the Unix epoch (OTLP's <c>*_time_unix_nano</c>).</summary>
    public static DateTime Time(ReadOnlyMemory<byte> message, int field) => DateTime.UnixEpoch.AddTicks((long)(Number(message, field) / 100));

    /// <summary>
    /// A repeated <c>KeyValue</c> field (key 1, value 2: <c>AnyValue</c> with string_value 1 or int_value 3, the
    /// latter as its decimal text, e.g. <c>http.response.status_code</c>); other kinds read as empty.
    /// </summary>
    public static Dictionary<string, string> Attributes(ReadOnlyMemory<byte> message, int field)
    {
        var attributes = new Dictionary<string, string>(StringComparer.Ordinal);
        foreach (var keyValue in Messages(message, field))
        {
            var key = String(keyValue, 1);
            var value = Messages(keyValue, 2).Select(AnyValue).FirstOrDefault();
            attributes[key] = value ?? "";
        }

        return attributes;
    }

    private static string AnyValue(ReadOnlyMemory<byte> any) =>
        Fields(any).FirstOrDefault() switch
        {
            { Number: 1, WireType: 2 } text => Encoding.UTF8.GetString(text.Bytes.Span),
            { Number: 3, WireType: 0 } integer => ((long)integer.Fixed).ToString(System.Globalization.CultureInfo.InvariantCulture),
            _ => "",
        };

    /// <summary>The <c>service.name</c> of a <c>Resource</c> (attributes 1).</summary>
    public static string ServiceName(ReadOnlyMemory<byte> resource) => Attributes(resource, 1).GetValueOrDefault("service.name") ?? "";

    public static List<Field> Fields(ReadOnlyMemory<byte> message)
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
