using System.Collections.Concurrent;
using System.Text.Json;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.Tests.Infrastructure;

namespace HttpPerf.Tests.Processes;

/// <summary>
/// What the dashboard shows without help (docs/dashboard.md): one run of the four services exporting OTLP/HTTP
/// protobuf to the in-test receiver, two product lists, two catalogs and two exports in each mode, and health
/// probes; then the exported metrics, spans and logs are decoded and checked.
/// </summary>
[Collection(Lanes.Processes)]
[Trait(Kind.Name, Kind.Processes)]
public sealed class DashboardTelemetryTests(SmallSystemFixture fixture) : SystemTests<SmallSystemFixture>(fixture)
{
    private static readonly string[] Lessons = ["/api/products", "/api/catalog/products", "/api/catalog/export"];

    [Fact]
    public async Task One_run_gives_readable_histograms_the_whole_requests_mode_distinct_span_names_and_quiet_logs()
    {
        var console = new ConcurrentQueue<(string Service, string Line)>();
        var watchers = Fixture.System.Services.Select(service => (service, watcher: new Action<string>(line => console.Enqueue((service.Name, line))))).ToList();
        watchers.ForEach(w => w.service.Output += w.watcher);
        try
        {
            var started = DateTime.UtcNow;
            foreach (var mode in new[] { PerfMode.Naive, PerfMode.Optimized })
            {
                for (var i = 0; i < 2; i++)
                {
                    foreach (var path in Lessons)
                    {
                        var fetched = await Http.GetAsync(Fixture.Gateway, path, mode);
                        Assert.Equal(200, fetched.Status);
                        Assert.Equal(mode, PerfMode.Summarize(fetched.Variants));
                    }
                }
            }

            foreach (var service in Fixture.System.Services)
            {
                using var probe = new HttpClient { BaseAddress = service.BaseAddress };
                Assert.True((await probe.GetAsync("/health", Cancel)).IsSuccessStatusCode);
                Assert.True((await probe.GetAsync("/alive", Cancel)).IsSuccessStatusCode);
            }

            var ended = DateTime.UtcNow;
            var receiver = Fixture.Telemetry;

            // Wait for what the run must have exported: the whole request's mode on the upstream hops' request
            // metrics, the Gateway's spans of the catalog and the export, and its 12 exchange lines (logs of the
            // other services were written before the Gateway's last one, and go out on the same 200 ms schedule).
            var expected = new Dictionary<string, Func<MetricPoint, bool>>();
            foreach (var service in new[] { "gateway", "frontend" })
            {
                foreach (var mode in new[] { PerfMode.Naive, PerfMode.Optimized })
                {
                    expected[$"{service} perf.mode={mode}"] = p => p.Service == service && p.Metric == "http.server.request.duration" && p["perf.mode"] == mode;
                }
            }

            expected["catalog /catalog/products duration"] = p => p.Service == "catalog" && p.Metric == "http.server.request.duration" && p["http.route"] == "/catalog/products";
            expected["catalog time to first byte"] = p => p.Service == "catalog" && p.Metric == "httpperf.server.time_to_first_byte";
            expected["frontend client duration"] = p => p.Service == "frontend" && p.Metric == "http.client.request.duration" && p["perf.mode"] is not null;
            Assert.Empty(await receiver.WaitForPointsAsync(TimeSpan.FromSeconds(20), expected));
            Assert.True(await WaitUntilAsync(() =>
                receiver.Spans().Count(s => s.Service == "gateway" && s.Name == "GET /api/catalog/export") >= 4
                && receiver.Logs().Count(l => l.Service == "gateway" && l.Time >= started && l.Body.Contains(" -> 200", StringComparison.Ordinal)) >= 12));

            // 1. Histograms fine enough to read a 1.5x step, server and client side, and the time to first byte.
            var points = receiver.MetricPoints();
            AssertReadable(points.Last(expected["catalog /catalog/products duration"]));
            AssertReadable(points.Last(expected["catalog time to first byte"]));
            AssertReadable(points.Last(expected["frontend client duration"]));

            // 2. Probes are not requests: no request metric carries their route (routing's own match counter still does).
            Assert.Contains(points, p => p.Metric == "aspnetcore.routing.match_attempts" && p["http.route"] == "/health");
            Assert.DoesNotContain(points, p => p.Metric.StartsWith("http.server.", StringComparison.Ordinal) && p["http.route"] is "/health" or "/alive");

            // 3. The upstream hops name the whole request's mode: a bounded tag.
            Assert.All(points.Where(p => p["perf.mode"] is not null), p => Assert.Contains(p["perf.mode"], PerfMode.All.Append("mixed")));

            // 4. Distinct names for distinct lessons, with the mode on the server span; probes stay out of traces. The
            // receiver holds what every test of the collection exported: only the spans this run started are read.
            var spans = receiver.Spans().Where(s => s.Start >= started).ToList();
            var gatewaySpans = spans.Where(s => s.Service == "gateway").ToList();
            foreach (var path in Lessons)
            {
                Assert.Contains(gatewaySpans, s => s.Name == $"GET {path}{(path == "/api/products" ? "/{**rest}" : "")}" && s["perf.mode"] == PerfMode.Naive);
            }

            Assert.DoesNotContain(spans, s => s.Name.Contains("/health", StringComparison.Ordinal) || s.Name.Contains("/alive", StringComparison.Ordinal));

            // The landing page splits the same way: a row per route and mode.
            using var live = JsonDocument.Parse(await Fixture.Gateway.GetStringAsync("/live", Cancel));
            var rows = live.RootElement.GetProperty("routes").EnumerateArray()
                .Select(r => (r.GetProperty("route").GetString(), r.GetProperty("path").GetString(), r.GetProperty("variant").GetString())).ToList();
            Assert.All(live.RootElement.GetProperty("routes").EnumerateArray(), r => Assert.Contains(r.GetProperty("p50MsBySlot").EnumerateArray(), slot => slot.ValueKind == JsonValueKind.Number));
            foreach (var mode in new[] { PerfMode.Naive, PerfMode.Optimized })
            {
                Assert.Contains(("products", "/api/products/{**rest}", mode), rows);
                Assert.Contains(("catalog", "/api/catalog/products", mode), rows);
                Assert.Contains(("export", "/api/catalog/export", mode), rows);
            }

            // 5. Logs a person reads: no "(null)", nothing about telemetry export, nothing from Polly but a resilience event
            // (a retry or a timeout, Warning and above: on a busy machine a call may really be retried; its per-attempt
            // Information and Debug records stay off), and at most 3 Information lines a product list in Frontend.Api
            // (4 lists here), in the exported logs and on the console.
            var logs = receiver.Logs().Where(l => l.Time >= started).ToList();
            Assert.NotEmpty(logs);
            Assert.DoesNotContain(logs, l => l.Body.Contains("(null)", StringComparison.Ordinal));
            Assert.DoesNotContain(logs, l => (l.Category.StartsWith("Polly", StringComparison.Ordinal) && l.Severity < 13) || l.Category.Contains("Otlp", StringComparison.Ordinal));
            var frontendInformation = logs.Where(l => l.Service == "frontend" && l.Time <= ended && l.IsInformation).ToList();
            Assert.True(frontendInformation.Count <= 12, string.Join(Environment.NewLine, frontendInformation.Select(l => $"{l.Category}: {l.Body}")));

            var lines = console.ToList();
            TestContext.Current.TestOutputHelper?.WriteLine(
                $"{logs.Count} log records exported, {frontendInformation.Count} Frontend.Api Information; {lines.Count} console lines; {points.Count} metric points, {spans.Count} spans");
            Assert.NotEmpty(lines);
            Assert.DoesNotContain(lines, l => l.Line.Contains("(null)", StringComparison.Ordinal)
                || (l.Line.Contains("Polly", StringComparison.Ordinal) && !l.Line.StartsWith("warn:", StringComparison.Ordinal) && !l.Line.StartsWith("fail:", StringComparison.Ordinal)));
            var frontendConsole = lines.Where(l => l.Service == Fixture.System.Frontend.Name && l.Line.StartsWith("info:", StringComparison.Ordinal)).ToList();
            Assert.True(frontendConsole.Count <= 12, string.Join(Environment.NewLine, frontendConsole.Select(l => l.Line)));
        }
        finally
        {
            watchers.ForEach(w => w.service.Output -= w.watcher);
        }
    }

    [Fact]
    public async Task Yarps_active_health_checks_run_but_no_span_of_them_is_exported()
    {
        var receiver = Fixture.Telemetry;

        // The Gateway exports traces: one proxied request's span arrives.
        Assert.Equal(200, (await Http.GetAsync(Fixture.Gateway, "/api/catalog/export")).Status);
        Assert.True(await WaitUntilAsync(() => receiver.Spans().Any(s => s.Service == "gateway" && s.Name == "GET /api/catalog/export")));

        // YARP probes the Catalog's /health every 5 s (Gateway/appsettings.json), and the Catalog's routing counter
        // counts each probe: two more rounds have run, and their spans had time to leave (batches every 200 ms).
        var before = CatalogHealthRequests(receiver);
        Assert.True(await WaitUntilAsync(() => CatalogHealthRequests(receiver) >= before + 2), $"the Catalog's /health count stayed at {before}");
        await Task.Delay(TimeSpan.FromSeconds(1), Cancel);

        var probeSpans = receiver.Spans()
            .Where(s => s.Service == "gateway")
            .Where(s => s.Name is "proxy.cluster_health_checks" or "proxy.destination_health_check" || s["url.full"]?.EndsWith("/health", StringComparison.Ordinal) == true)
            .Select(s => $"{s.Name} {s["url.full"]}");
        Assert.Empty(probeSpans);
    }

    /// <summary>Requests the Catalog has routed to <c>/health</c> so far, from its exported routing counter.</summary>
    private static double CatalogHealthRequests(OtlpReceiver receiver) =>
        receiver.MetricPoints()
            .Where(p => p.Service == "catalog" && p.Metric == "aspnetcore.routing.match_attempts" && p["http.route"] == "/health")
            .Select(p => p.Value).DefaultIfEmpty(0).Max();

    [Theory]
    [InlineData("Gateway.Buffering=naive, Gateway.Upstream=naive, Catalog.Serialization=naive", "naive")]
    [InlineData("Gateway.Buffering=optimized, Gateway.Upstream=optimized, Catalog.Serialization=naive", "mixed")]
    [InlineData("Gateway.Buffering=streaming, Frontend.CatalogClient=streaming, Catalog.Serialization=streaming", "streaming")]
    [InlineData("", "none")]
    public void The_mode_of_a_request_is_the_variant_every_hop_served_else_mixed(string variantsHeader, string mode) =>
        Assert.Equal(mode, PerfMode.Summarize(variantsHeader));

    /// <summary>Explicit bounds no more than 1.5x apart from 10 ms to 10 s (or an exponential histogram).</summary>
    private static void AssertReadable(MetricPoint point)
    {
        if (point.Exponential)
        {
            return;
        }

        var bounds = point.Bounds;
        Assert.True(bounds.Count > 0 && bounds[0] <= 0.01 && bounds[^1] >= 10, $"{point.Service} {point.Metric}: bounds {string.Join(", ", bounds)}");
        for (var i = 1; i < bounds.Count; i++)
        {
            if (bounds[i - 1] >= 0.01 && bounds[i - 1] < 10)
            {
                Assert.True(bounds[i] / bounds[i - 1] <= 1.5 + 1e-9, $"{point.Service} {point.Metric}: {bounds[i - 1]} -> {bounds[i]} s is more than 1.5x");
            }
        }
    }

    private static Task<bool> WaitUntilAsync(Func<bool> condition) =>
        Poll.UntilAsync(() => Task.FromResult(condition()), TimeSpan.FromSeconds(20), TimeSpan.FromMilliseconds(200));
}
