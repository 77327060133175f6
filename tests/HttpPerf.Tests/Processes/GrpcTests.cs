using System.Diagnostics;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.Tests.Infrastructure;
using Bench.LocalSystem;

namespace HttpPerf.Tests.Processes;

/// <summary>
/// Frontend.Grpc on real processes, the Catalog behind service discovery's <c>http://_h2.catalog</c>: the product
/// list over gRPC is the JSON one byte for byte from every rung and at every batch size, and its telemetry tells one
/// message from many; a bad batch is the client's fault; with two replicas, one that hangs is hedged onto the other;
/// a message over the client's receive limit, and a Catalog that is gone, are the problems the page names
/// (docs/pitfalls/Frontend.Grpc.md).
/// </summary>
[Collection(Lanes.Processes)]
[Trait(Kind.Name, Kind.Processes)]
[Lesson(Pitfalls.FrontendGrpc)]
public sealed class GrpcTests
{
    [Fact]
    public async Task Every_rung_and_batch_size_answers_the_JSON_product_lists_bytes_tells_its_messages_and_a_bad_batch_is_a_400()
    {
        await using var telemetry = await OtlpReceiver.StartAsync();
        await using var system = await LocalSystem.StartAsync(
            new LocalSystemOptions { ProductCount = 2_000, Environment = telemetry.ExporterEnvironment }, Cancel);
        using var gateway = new HttpClient { BaseAddress = system.Gateway.BaseAddress };
        var json = await Http.GetAsync(gateway, "/api/products", PerfMode.Optimized);
        Assert.Equal(200, json.Status);

        foreach (var mode in PerfMode.All)
        {
            foreach (var batch in new[] { "", "?batch=1", "?batch=7", "?batch=1000", "?batch=10000" })
            {
                var grpc = await Http.GetAsync(gateway, $"/api/products/grpc{batch}", mode);
                Assert.True(grpc.Status == 200, $"{mode} {batch}: {grpc.Status} {System.Text.Encoding.UTF8.GetString(grpc.Body)}");
                Assert.Equal(json.Sha256, grpc.Sha256);
                Assert.Equal("application/json", grpc.MediaType);
                Assert.Contains($"{Pitfalls.FrontendGrpc}={mode}", grpc.Variants, StringComparison.Ordinal);
            }
        }

        // The dashboard's story: the unary call is one message of the whole list (about 500 KB here), the stream many
        // (2 of 1,000 products, 2,000 of 1, ...), and each product list's span says how many it took.
        var missing = await telemetry.WaitForPointsAsync(TimeSpan.FromSeconds(15), new Dictionary<string, Func<MetricPoint, bool>>
        {
            ["naive: one message a list"] = p => IsMessageSize(p, PerfMode.Naive) && p.Value == 5 && p.Sum / p.Value > 400_000,
            ["optimized: many"] = p => IsMessageSize(p, PerfMode.Optimized) && p.Value == 2 + 2_000 + 286 + 2 + 1,
        });
        Assert.Empty(missing);
        var spans = await SpansAsync(telemetry, s => s.Service == "frontend" && s["catalog.grpc.messages"] is not null, count: 15);
        Assert.Contains(spans, s => s["catalog.grpc.messages"] == "1" && s[PerfTelemetryVariants] is { } v && v.Contains($"{Pitfalls.FrontendGrpc}={PerfMode.Naive}", StringComparison.Ordinal));
        Assert.Contains(spans, s => s["catalog.grpc.messages"] == "2000" && s[PerfTelemetryVariants] is { } v && v.Contains($"{Pitfalls.FrontendGrpc}={PerfMode.Optimized}", StringComparison.Ordinal));

        foreach (var batch in new[] { "0", "10001", "-3", "many" })
        {
            var bad = await Http.GetAsync(gateway, $"/api/products/grpc?batch={batch}", PerfMode.Optimized);
            Assert.True(bad.Status == 400, $"batch={batch}: {bad.Status} {System.Text.Encoding.UTF8.GetString(bad.Body)}");
            Assert.Equal("application/problem+json", bad.MediaType);
        }
    }

    private const string PerfTelemetryVariants = "perf.variants";

    private static bool IsMessageSize(MetricPoint point, string variant) =>
        point.Service == "frontend" && point.Metric == "httpperf.grpc.message.size" && point["perf.flag"] == Pitfalls.FrontendGrpc && point["perf.variant"] == variant;

    private static async Task<List<SpanRecord>> SpansAsync(OtlpReceiver telemetry, Func<SpanRecord, bool> match, int count)
    {
        var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(15);
        var spans = telemetry.Spans().Where(match).ToList();
        while (spans.Count < count && DateTime.UtcNow < deadline)
        {
            await Task.Delay(200, Cancel);
            spans = telemetry.Spans().Where(match).ToList();
        }

        return spans;
    }

    [Fact]
    public async Task A_hung_replica_is_hedged_a_message_over_the_limit_is_a_502_a_Catalog_past_the_deadline_a_504_and_none_a_503()
    {
        await using var system = await LocalSystem.StartAsync(new LocalSystemOptions
        {
            Replicas = 2,
            ProductCount = 2_000,
            Environment = new Dictionary<string, string>
            {
                // 2,000 products are about 500 KB in one message: over this limit, where 1,000-product messages are not.
                ["Frontend__Grpc__UnaryMaxReceiveMessageSize"] = "65536",
                ["Frontend__Grpc__StreamHedgingDelay"] = "00:00:00.500",
                ["Frontend__Grpc__Deadline"] = "00:00:04",
            },
        }, Cancel);
        using var gateway = new HttpClient { BaseAddress = system.Gateway.BaseAddress, Timeout = TimeSpan.FromSeconds(60) };

        var tooLarge = await Http.GetAsync(gateway, "/api/products/grpc", PerfMode.Naive);
        Assert.Equal(502, tooLarge.Status);
        var problem = tooLarge.Problem();
        Assert.Equal("Catalog answer too large", problem.Title);
        Assert.Contains("ResourceExhausted", problem.Detail, StringComparison.Ordinal);
        var expected = await Http.GetAsync(gateway, "/api/products/grpc", PerfMode.Optimized);
        Assert.Equal(200, expected.Status);

        // One replica of two frozen: every other call's first attempt meets it, and its hedge, half a second later, the other.
        await system.CatalogReplicas[0].FreezeAsync();
        try
        {
            foreach (var mode in new[] { PerfMode.Streaming, PerfMode.Optimized, PerfMode.Streaming, PerfMode.Optimized })
            {
                var started = Stopwatch.GetTimestamp();
                var answer = await Http.GetAsync(gateway, "/api/products/grpc", mode);
                var elapsed = Stopwatch.GetElapsedTime(started);
                Assert.True(answer.Status == 200, $"{mode}, one replica frozen: {answer.Status} {System.Text.Encoding.UTF8.GetString(answer.Body)}");
                Assert.Equal(expected.Sha256, answer.Sha256);
                Assert.True(elapsed < TimeSpan.FromSeconds(5), $"{mode}, one replica frozen: {elapsed.TotalSeconds:0.0} s");
            }

            // Both frozen: the hedge meets the other frozen replica too, and the call's deadline ends it.
            await system.CatalogReplicas[1].FreezeAsync();
            var late = await Http.GetAsync(gateway, "/api/products/grpc", PerfMode.Optimized);
            Assert.True(late.Status == 504, $"both replicas frozen: {late.Status} {System.Text.Encoding.UTF8.GetString(late.Body)}");
            Assert.Equal("Catalog too slow", late.Problem().Title);
        }
        finally
        {
            foreach (var replica in system.CatalogReplicas)
            {
                await replica.ThawAsync();
            }
        }

        // The Catalog answers gRPC's own health protocol on the same listener, from the same checks as /health.
        using (var channel = Grpc.Net.Client.GrpcChannel.ForAddress(system.CatalogReplicas[1].Http2Address!))
        {
            var health = await new Grpc.Health.V1.Health.HealthClient(channel).CheckAsync(new Grpc.Health.V1.HealthCheckRequest(), cancellationToken: Cancel);
            Assert.Equal(Grpc.Health.V1.HealthCheckResponse.Types.ServingStatus.Serving, health.Status);
        }

        foreach (var replica in system.CatalogReplicas)
        {
            replica.Kill();
        }

        foreach (var mode in PerfMode.All)
        {
            var gone = await Http.GetAsync(gateway, "/api/products/grpc", mode);
            Assert.True(gone.Status == 503, $"{mode}, no Catalog: {gone.Status} {System.Text.Encoding.UTF8.GetString(gone.Body)}");
            Assert.Equal("Catalog unavailable", gone.Problem().Title);
        }
    }
}
