using System.Text.Json;
using HttpPerf.Tests.Infrastructure;

namespace HttpPerf.Tests.AppHost;

/// <summary>
/// Spans as the Aspire dashboard holds them, read from its telemetry API (<c>GET /api/telemetry/spans</c>, the one
/// <c>aspire otel spans</c> reads), which answers in OTLP JSON.
/// </summary>
public static class DashboardSpans
{
    public sealed record Span(string Service, string TraceId, string Name, int Kind, IReadOnlyDictionary<string, string> Attributes)
    {
        /// <summary>The resource's <c>service.instance.id</c>: which replica of the service it came from.</summary>
        public string Instance { get; init; } = "";
    }

    /// <summary>A client of the dashboard's telemetry API, with its key; <paramref name="timeout"/> for long answers.</summary>
    public static HttpClient Client(AppHostUnderTest appHost, TimeSpan? timeout = null)
    {
        var client = new HttpClient { BaseAddress = appHost.Dashboard };
        client.DefaultRequestHeaders.Add("x-api-key", appHost.DashboardApiKey);
        if (timeout is { } answerWithin)
        {
            client.Timeout = answerWithin;
        }

        return client;
    }

    public static async Task<IReadOnlyList<Span>> GetAsync(HttpClient dashboard, string? traceId, CancellationToken cancellationToken, string? resourceName = null)
    {
        var query = traceId is null ? $"resource={resourceName}" : $"traceId={traceId}";
        using var document = await ReadAsync(dashboard, $"/api/telemetry/spans?{query}&limit=1000", cancellationToken);
        var spans = new List<Span>();
        if (!document.RootElement.TryGetProperty("data", out var data) || !data.TryGetProperty("resourceSpans", out var resourceSpans))
        {
            return spans;
        }

        foreach (var resource in resourceSpans.EnumerateArray())
        {
            var resourceAttributes = Attributes(resource.GetProperty("resource"));
            var service = resourceAttributes.GetValueOrDefault("service.name") ?? "";
            var instance = resourceAttributes.GetValueOrDefault("service.instance.id") ?? "";
            foreach (var scope in resource.GetProperty("scopeSpans").EnumerateArray())
            {
                foreach (var span in scope.GetProperty("spans").EnumerateArray())
                {
                    var kind = span.TryGetProperty("kind", out var k) && k.ValueKind == JsonValueKind.Number ? k.GetInt32() : 0;
                    spans.Add(new Span(service, span.GetProperty("traceId").GetString()!, span.GetProperty("name").GetString()!, kind, Attributes(span)) { Instance = instance });
                }
            }
        }

        return spans;
    }

    /// <summary>One answer of the dashboard's telemetry API, in OTLP JSON.</summary>
    internal static async Task<JsonDocument> ReadAsync(HttpClient dashboard, string path, CancellationToken cancellationToken)
    {
        using var response = await dashboard.GetAsync(path, cancellationToken);
        if (!response.IsSuccessStatusCode)
        {
            throw new HttpRequestException($"The dashboard's telemetry API answered {(int)response.StatusCode}: {await response.Content.ReadAsStringAsync(cancellationToken)}");
        }

        return await JsonDocument.ParseAsync(await response.Content.ReadAsStreamAsync(cancellationToken), cancellationToken: cancellationToken);
    }

    internal static Dictionary<string, string> Attributes(JsonElement owner)
    {
        var attributes = new Dictionary<string, string>();
        if (owner.TryGetProperty("attributes", out var list))
        {
            foreach (var attribute in list.EnumerateArray())
            {
                var value = attribute.GetProperty("value");
                attributes[attribute.GetProperty("key").GetString()!] = value.EnumerateObject().FirstOrDefault().Value.ToString();
            }
        }

        return attributes;
    }
}

/// <summary>Log records as the Aspire dashboard holds them (<c>GET /api/telemetry/logs</c>, what <c>aspire otel logs</c> reads).</summary>
public static class DashboardLogs
{
    /// <summary>One record: its logger category (the OTLP scope), its message, when it was written, and its attributes.</summary>
    public sealed record Log(string Category, string Body, DateTime Time, IReadOnlyDictionary<string, string> Attributes)
    {
        public string? this[string attribute] => Attributes.GetValueOrDefault(attribute);

        /// <summary>The trace the record was written in, as its Trace link on the dashboard opens it ("" for none).</summary>
        public string TraceId { get; init; } = "";
    }

    public static async Task<IReadOnlyList<Log>> GetAsync(HttpClient dashboard, string resourceName, string search, CancellationToken cancellationToken)
    {
        using var document = await DashboardSpans.ReadAsync(dashboard, $"/api/telemetry/logs?resource={resourceName}&search={Uri.EscapeDataString(search)}&limit=10000", cancellationToken);
        var logs = new List<Log>();
        if (!document.RootElement.TryGetProperty("data", out var data) || !data.TryGetProperty("resourceLogs", out var resourceLogs))
        {
            return logs;
        }

        foreach (var scope in resourceLogs.EnumerateArray().SelectMany(r => r.GetProperty("scopeLogs").EnumerateArray()))
        {
            var category = scope.TryGetProperty("scope", out var s) && s.TryGetProperty("name", out var name) ? name.GetString() ?? "" : "";
            foreach (var record in scope.GetProperty("logRecords").EnumerateArray())
            {
                var body = record.TryGetProperty("body", out var b) ? b.EnumerateObject().FirstOrDefault().Value.ToString() : "";
                var nanoseconds = record.TryGetProperty("timeUnixNano", out var t) ? ulong.Parse(t.ToString(), System.Globalization.CultureInfo.InvariantCulture) : 0;
                logs.Add(new Log(category, body, DateTime.UnixEpoch.AddTicks((long)(nanoseconds / 100)), DashboardSpans.Attributes(record))
                {
                    TraceId = record.TryGetProperty("traceId", out var trace) ? trace.GetString() ?? "" : "",
                });
            }
        }

        return logs;
    }
}
