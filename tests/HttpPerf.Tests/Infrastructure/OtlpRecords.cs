using static HttpPerf.Tests.Infrastructure.Protobuf;

namespace HttpPerf.Tests.Infrastructure;

/// <summary>One exported span: the service that sent it, its name (what a trace list shows) and its attributes.</summary>
public sealed record SpanRecord(string Service, string Name, IReadOnlyDictionary<string, string> Attributes)
{
    public string? this[string attribute] => Attributes.GetValueOrDefault(attribute);

    /// <summary>The trace, this span and its parent (empty for a root), as hex.</summary>
    public string TraceId { get; init; } = "";

    public string SpanId { get; init; } = "";

    public string ParentSpanId { get; init; } = "";

    public DateTime Start { get; init; }

    public DateTime End { get; init; }

    public TimeSpan Duration => End - Start;
}

/// <summary>
/// One exported log record: the service, the logger category (the OTLP scope name), the severity number
/// (9-12 Information, 13-16 Warning, 5-8 Debug), the formatted message, and when it was written.
/// </summary>
public sealed record LogRecord(string Service, string Category, int Severity, string Body, DateTime Time)
{
    public bool IsInformation => Severity is >= 9 and <= 12;

    /// <summary>The record's attributes: a structured message's placeholders, and the event's id and name.</summary>
    public IReadOnlyDictionary<string, string> Attributes { get; init; } = new Dictionary<string, string>();

    public string? this[string attribute] => Attributes.GetValueOrDefault(attribute);
}

/// <summary>
/// Reads spans and log records out of OTLP/HTTP protobuf exports (<c>ExportTraceServiceRequest</c>,
/// <c>ExportLogsServiceRequest</c>); field numbers are those of opentelemetry-proto's trace.proto and logs.proto.
/// </summary>
public static class OtlpRecords
{
    public static IEnumerable<SpanRecord> Spans(byte[] exportRequest)
    {
        // resource_spans 1 { resource 1, scope_spans 2 { spans 2 { trace_id 1, span_id 2, parent_span_id 4, name 5,
        // start_time_unix_nano 7, end_time_unix_nano 8, attributes 9 } } }
        foreach (var resourceSpans in Messages(exportRequest, 1))
        {
            var service = Messages(resourceSpans, 1).Select(ServiceName).FirstOrDefault() ?? "";
            foreach (var span in Messages(resourceSpans, 2).SelectMany(scope => Messages(scope, 2)))
            {
                yield return new SpanRecord(service, String(span, 5), Attributes(span, 9))
                {
                    TraceId = Hex(span, 1),
                    SpanId = Hex(span, 2),
                    ParentSpanId = Hex(span, 4),
                    Start = Time(span, 7),
                    End = Time(span, 8),
                };
            }
        }
    }

    public static IEnumerable<LogRecord> Logs(byte[] exportRequest)
    {
        // resource_logs 1 { resource 1, scope_logs 2 { scope 1 { name 1 }, log_records 2 { time 1, severity 2, body 5, attributes 6 } } }
        foreach (var resourceLogs in Messages(exportRequest, 1))
        {
            var service = Messages(resourceLogs, 1).Select(ServiceName).FirstOrDefault() ?? "";
            foreach (var scopeLogs in Messages(resourceLogs, 2))
            {
                var category = Messages(scopeLogs, 1).Select(scope => String(scope, 1)).FirstOrDefault() ?? "";
                foreach (var record in Messages(scopeLogs, 2))
                {
                    var time = Time(record, 1);
                    var body = Messages(record, 5).Select(any => String(any, 1)).FirstOrDefault() ?? "";
                    yield return new LogRecord(service, category, (int)Number(record, 2), body, time) { Attributes = WithEventName(Attributes(record, 6), String(record, 12)) };
                }
            }
        }
    }

    /// <summary>OTLP's own event_name field (12), where the exporter fills it, beside the attributes.</summary>
    private static Dictionary<string, string> WithEventName(Dictionary<string, string> attributes, string eventName)
    {
        if (eventName.Length > 0)
        {
            attributes.TryAdd("event_name", eventName);
        }

        return attributes;
    }

    private static string Hex(ReadOnlyMemory<byte> message, int field) => Convert.ToHexStringLower(Messages(message, field).FirstOrDefault().Span);

}
