using static HttpPerf.Tests.Infrastructure.Protobuf;

namespace HttpPerf.Tests.Infrastructure;

/// <summary>One exported span: the service that sent it, its name (what a trace list shows) and its attributes.</summary>
public sealed record SpanRecord(string Service, string Name, IReadOnlyDictionary<string, string> Attributes)
{
    public string? this[string attribute] => Attributes.GetValueOrDefault(attribute);
}

/// <summary>
/// One exported log record: the service, the logger category (the OTLP scope name), the severity number
/// (9-12 Information, 13-16 Warning, 5-8 Debug), the formatted message, and when it was written.
/// </summary>
public sealed record LogRecord(string Service, string Category, int Severity, string Body, DateTime Time)
{
    public bool IsInformation => Severity is >= 9 and <= 12;
}

/// <summary>
/// Reads spans and log records out of OTLP/HTTP protobuf exports (<c>ExportTraceServiceRequest</c>,
/// <c>ExportLogsServiceRequest</c>); field numbers are those of opentelemetry-proto's trace.proto and logs.proto.
/// </summary>
public static class OtlpRecords
{
    public static IEnumerable<SpanRecord> Spans(byte[] exportRequest)
    {
        // resource_spans 1 { resource 1, scope_spans 2 { spans 2 { name 5, attributes 9 } } }
        foreach (var resourceSpans in Messages(exportRequest, 1))
        {
            var service = Messages(resourceSpans, 1).Select(ServiceName).FirstOrDefault() ?? "";
            foreach (var span in Messages(resourceSpans, 2).SelectMany(scope => Messages(scope, 2)))
            {
                yield return new SpanRecord(service, String(span, 5), Attributes(span, 9));
            }
        }
    }

    public static IEnumerable<LogRecord> Logs(byte[] exportRequest)
    {
        // resource_logs 1 { resource 1, scope_logs 2 { scope 1 { name 1 }, log_records 2 { time 1, severity 2, body 5 } } }
        foreach (var resourceLogs in Messages(exportRequest, 1))
        {
            var service = Messages(resourceLogs, 1).Select(ServiceName).FirstOrDefault() ?? "";
            foreach (var scopeLogs in Messages(resourceLogs, 2))
            {
                var category = Messages(scopeLogs, 1).Select(scope => String(scope, 1)).FirstOrDefault() ?? "";
                foreach (var record in Messages(scopeLogs, 2))
                {
                    var time = DateTime.UnixEpoch.AddTicks((long)(Number(record, 1) / 100));
                    var body = Messages(record, 5).Select(any => String(any, 1)).FirstOrDefault() ?? "";
                    yield return new LogRecord(service, category, (int)Number(record, 2), body, time);
                }
            }
        }
    }
}
