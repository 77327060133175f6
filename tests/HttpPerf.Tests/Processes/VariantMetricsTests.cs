using System.Net.Http.Json;
using System.Security.Cryptography;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.Tests.Infrastructure;

namespace HttpPerf.Tests.Processes;

/// <summary>
/// The live demo's promise: every request metric says which variant served it. The four services run as
/// processes exporting OTLP/HTTP to an in-test receiver; the exported points are decoded, not searched.
/// </summary>
[Collection(Lanes.Processes)]
[Trait(Kind.Name, Kind.Processes)]
[Lesson(Pitfalls.CatalogSerialization)]
[Lesson(Pitfalls.FrontendCatalogClient)]
[Lesson(Pitfalls.CatalogWriteStrategy)]
public sealed class VariantMetricsTests(SmallSystemFixture fixture) : SystemTests<SmallSystemFixture>(fixture)
{
    private static readonly string[] Services = ["gateway", "frontend", "catalog", "uploads"];

    [Fact]
    public async Task Every_service_tags_its_request_metrics_with_the_variant_that_served_each_request()
    {
        foreach (var mode in new[] { PerfMode.Naive, PerfMode.Optimized })
        {
            await SendEveryRouteAsync(mode);
        }

        // Every exported series this test needs, in both variants: the request duration of each service, each
        // route's own pitfall, Frontend.Api's calls to Catalog.Api, and the per-pitfall meters.
        var expected = new Dictionary<string, Func<MetricPoint, bool>>();
        foreach (var variant in new[] { PerfMode.Naive, PerfMode.Optimized })
        {
            foreach (var service in Services)
            {
                expected[$"{service} http.server.request.duration {variant}"] = p => p.Service == service && p.Metric == "http.server.request.duration" && p["perf.variant"] == variant && p.Value > 0;
                expected[$"{service} httpperf.server.time_to_first_byte {variant}"] = p => p.Service == service && p.Metric == "httpperf.server.time_to_first_byte" && p["perf.variant"] == variant;
            }

            foreach (var (service, flag, route) in new[]
            {
                ("gateway", Pitfalls.GatewayBuffering, "/api/uploads/{**rest}"),
                ("frontend", Pitfalls.FrontendCatalogClient, "/products"),
                ("catalog", Pitfalls.CatalogSerialization, "/catalog/products"),
                ("catalog", Pitfalls.CatalogWriteStrategy, "/catalog/export"),
                ("uploads", Pitfalls.UploadsReader, "/uploads/"),
                ("uploads", Pitfalls.UploadsDownload, "/uploads/{id}"),
            })
            {
                expected[$"{service} {route} {flag}={variant}"] = p => p.Service == service && p.Metric == "http.server.request.duration" && p["http.route"] == route && p["perf.flag"] == flag && p["perf.variant"] == variant;
            }

            expected[$"frontend http.client.request.duration {variant}"] = p => p.Service == "frontend" && p.Metric == "http.client.request.duration" && p["perf.flag"] == Pitfalls.FrontendCatalogClient && p["perf.variant"] == variant;
            expected[$"catalog export flushes {variant}"] = p => p.Service == "catalog" && p.Metric == "httpperf.server.response.flushes" && p["perf.flag"] == Pitfalls.CatalogWriteStrategy && p["perf.variant"] == variant;
        }

        Assert.Empty(await Fixture.Telemetry.WaitForPointsAsync(TimeSpan.FromSeconds(15), expected));
        var points = Fixture.Telemetry.MetricPoints();

        // Each point names the route's own pitfall, and only routes with a pitfall are tagged.
        var tagged = points.Where(p => p.Metric == "http.server.request.duration" && p["perf.variant"] is not null).ToList();
        Assert.All(tagged, p => Assert.Equal(Pitfalls.Find(p["perf.flag"]!)!.Service, ServiceOf(p.Service)));
        Assert.DoesNotContain(points, p => p.Metric == "http.server.request.duration" && p["http.route"] == "/health" && p["perf.variant"] is not null);

        // The per-pitfall meters show the lesson in numbers.
        var catalogSpool = Sum(points, "catalog", "httpperf.server.request.buffered", Pitfalls.CatalogSerialization, buffer: "temp_file");
        Assert.True(catalogSpool.Naive >= SmallSystemFixture.ProductCount * 100, $"naive Catalog spooled {catalogSpool.Naive} bytes");
        Assert.Equal(0, catalogSpool.Optimized);
        var frontendHeld = Sum(points, "frontend", "httpperf.server.request.buffered", Pitfalls.FrontendCatalogClient, buffer: "memory");
        Assert.True(frontendHeld.Naive > 0 && frontendHeld.Optimized == 0, $"Frontend held {frontendHeld}");
        var exportFlushes = Sum(points, "catalog", "httpperf.server.response.flushes", Pitfalls.CatalogWriteStrategy);
        Assert.True(exportFlushes.Naive >= SmallSystemFixture.ProductCount, $"export flushes {exportFlushes}");
        Assert.True(exportFlushes.Optimized * 20 < exportFlushes.Naive, $"export flushes {exportFlushes}");
        var exportBytes = Sum(points, "catalog", "http.server.response.body.size", Pitfalls.CatalogWriteStrategy, mean: true);
        Assert.True(exportBytes.Naive > 0 && exportBytes.Naive == exportBytes.Optimized, $"export body bytes a request {exportBytes}");
    }

    /// <summary>One request per route through the Gateway in <paramref name="mode"/>: product list, catalog, export, an upload and its download.</summary>
    private async Task SendEveryRouteAsync(string mode)
    {
        foreach (var path in new[] { "/api/products", "/api/catalog/products", "/api/catalog/export" })
        {
            Assert.Equal(200, (await Http.GetAsync(Fixture.Gateway, path, mode)).Status);
        }

        var bytes = RandomNumberGenerator.GetBytes(200_000);
        using var upload = new HttpRequestMessage(HttpMethod.Post, "/api/uploads")
        {
            Content = new MultipartFormDataContent { { new ByteArrayContent(bytes), "file", "metrics.bin" } },
            Headers = { { Http.ModeHeader, mode } },
        };
        using var stored = await Fixture.Gateway.SendAsync(upload, Cancel);
        Assert.Equal(System.Net.HttpStatusCode.Created, stored.StatusCode);
        var receipt = (await stored.Content.ReadFromJsonAsync<List<UploadReceipt>>(Cancel))![0];

        var download = await Http.GetAsync(Fixture.Gateway, $"/api/uploads/{receipt.Id}", mode);
        Assert.Equal(Convert.ToHexStringLower(SHA256.HashData(bytes)), download.Sha256);
    }

    /// <summary>A pitfall histogram's cumulative sum (or mean) in each variant, from the latest export of each series; -1 if none.</summary>
    private static (double Naive, double Optimized) Sum(IReadOnlyList<MetricPoint> points, string service, string metric, string flag, string? buffer = null, bool mean = false)
    {
        double Latest(string variant) => points
            .Where(p => p.Service == service && p.Metric == metric && p["perf.flag"] == flag && p["perf.variant"] == variant && p["perf.buffer"] == buffer)
            .OrderBy(p => p.Value)
            .Select(p => mean ? p.Sum / p.Value : p.Sum)
            .DefaultIfEmpty(-1)
            .Last();
        return (Latest(PerfMode.Naive), Latest(PerfMode.Optimized));
    }

    private static string ServiceOf(string serviceName) => serviceName.Replace(".api", "", StringComparison.Ordinal);
}
