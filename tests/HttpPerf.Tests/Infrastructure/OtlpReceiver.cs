using System.Collections.Concurrent;
using System.Text;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Http.Features;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;

namespace HttpPerf.Tests.Infrastructure;

/// <summary>
/// A stand-in for the Aspire dashboard's collector: accepts OTLP/HTTP protobuf exports on loopback and
/// keeps the raw payloads. Protobuf stores strings as UTF-8 bytes, so attribute keys and values can be
/// found in them without decoding the schema.
/// </summary>
public sealed class OtlpReceiver : IAsyncDisposable
{
    private readonly WebApplication _app;
    private readonly ConcurrentQueue<(string Signal, byte[] Payload)> _payloads = new();

    private OtlpReceiver(WebApplication app) => _app = app;

    public Uri Endpoint { get; private set; } = null!;

    public static async Task<OtlpReceiver> StartAsync()
    {
        var builder = WebApplication.CreateSlimBuilder();
        builder.WebHost.UseUrls("http://127.0.0.1:0");
        builder.Logging.ClearProviders();
        var app = builder.Build();
        var receiver = new OtlpReceiver(app);
        app.MapPost("/v1/{signal}", async (string signal, HttpRequest request) =>
        {
            using var buffer = new MemoryStream();
            await request.Body.CopyToAsync(buffer);
            receiver._payloads.Enqueue((signal, buffer.ToArray()));
            return Results.Ok();
        });
        await app.StartAsync();
        var address = app.Services.GetRequiredService<IServer>().Features.GetRequiredFeature<IServerAddressesFeature>().Addresses.First();
        receiver.Endpoint = new Uri(address);
        return receiver;
    }

    /// <summary>Environment that points a service's OpenTelemetry exporter here, flushing fast.</summary>
    public IReadOnlyDictionary<string, string> ExporterEnvironment => new Dictionary<string, string>
    {
        ["OTEL_EXPORTER_OTLP_ENDPOINT"] = Endpoint.ToString().TrimEnd('/'),
        ["OTEL_EXPORTER_OTLP_PROTOCOL"] = "http/protobuf",
        ["OTEL_BSP_SCHEDULE_DELAY"] = "200",
        ["OTEL_BLRP_SCHEDULE_DELAY"] = "200",
        ["OTEL_METRIC_EXPORT_INTERVAL"] = "1000",
    };

    /// <summary>Waits until one exported payload of <paramref name="signal"/> contains every string given.</summary>
    public async Task<bool> WaitForAsync(string signal, TimeSpan timeout, params string[] texts)
    {
        var needles = texts.Select(Encoding.UTF8.GetBytes).ToArray();
        var deadline = DateTime.UtcNow + timeout;
        while (DateTime.UtcNow < deadline)
        {
            if (_payloads.Any(p => p.Signal == signal && needles.All(n => p.Payload.AsSpan().IndexOf(n) >= 0)))
            {
                return true;
            }

            await Task.Delay(100);
        }

        return false;
    }

    /// <summary>Every metric point exported so far, decoded.</summary>
    public IReadOnlyList<MetricPoint> MetricPoints() =>
        _payloads.Where(p => p.Signal == "metrics").SelectMany(p => OtlpMetrics.Points(p.Payload)).ToList();

    /// <summary>Every span exported so far, decoded.</summary>
    public IReadOnlyList<SpanRecord> Spans() =>
        _payloads.Where(p => p.Signal == "traces").SelectMany(p => OtlpRecords.Spans(p.Payload)).ToList();

    /// <summary>Every log record exported so far, decoded.</summary>
    public IReadOnlyList<LogRecord> Logs() =>
        _payloads.Where(p => p.Signal == "logs").SelectMany(p => OtlpRecords.Logs(p.Payload)).ToList();

    /// <summary>
    /// Waits until, for each of <paramref name="expected"/>, some exported metric point matches; returns the
    /// descriptions of those still unmatched at the timeout (none: all were seen).
    /// </summary>
    public async Task<IReadOnlyList<string>> WaitForPointsAsync(TimeSpan timeout, IReadOnlyDictionary<string, Func<MetricPoint, bool>> expected)
    {
        var deadline = DateTime.UtcNow + timeout;
        while (true)
        {
            var points = MetricPoints();
            var missing = expected.Where(e => !points.Any(e.Value)).Select(e => e.Key).ToList();
            if (missing.Count == 0 || DateTime.UtcNow >= deadline)
            {
                return missing;
            }

            await Task.Delay(200);
        }
    }

    /// <summary>Whether any payload received so far, of any signal, contains <paramref name="text"/>.</summary>
    public bool AnyContains(string text)
    {
        var needle = Encoding.UTF8.GetBytes(text);
        return _payloads.Any(p => p.Payload.AsSpan().IndexOf(needle) >= 0);
    }

    public async ValueTask DisposeAsync() => await _app.DisposeAsync();
}
