using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.Tests.Infrastructure;

namespace HttpPerf.Tests.Processes;

/// <summary>The catalog path Gateway -> Frontend.Api -> Catalog.Api on every rung, on a small catalog.</summary>
[Collection(Lanes.Processes)]
[Trait(Kind.Name, Kind.Processes)]
public sealed class CatalogPathTests(SmallSystemFixture fixture) : SystemTests<SmallSystemFixture>(fixture)
{
    [Fact]
    [Lesson(Pitfalls.CatalogSerialization)]
    public async Task Catalog_rungs_send_the_same_bytes()
    {
        var (naive, optimized) = await Http.GetInBothModesAsync(Fixture.Gateway, "/api/catalog/products");
        var streaming = await Http.GetAsync(Fixture.Gateway, "/api/catalog/products", "streaming");

        Assert.Equal("application/json", naive.MediaType);
        Assert.Equal("application/json", streaming.MediaType);
        Assert.Equal("application/json", optimized.MediaType);
        Assert.Equal("Gateway.Buffering=naive, Gateway.Upstream=naive, Catalog.Serialization=naive", naive.Variants);
        // The Gateway's pitfall has no streaming rung: it serves its best one.
        Assert.Equal("Gateway.Buffering=optimized, Gateway.Upstream=optimized, Catalog.Serialization=streaming", streaming.Variants);
        Assert.Equal("Gateway.Buffering=optimized, Gateway.Upstream=optimized, Catalog.Serialization=optimized", optimized.Variants);
        Assert.Equal(naive.Sha256, streaming.Sha256);
        Assert.Equal(naive.Sha256, optimized.Sha256);

        var products = optimized.Json<List<CatalogProduct>>();
        Assert.Equal(SmallSystemFixture.ProductCount, products.Count);
        Assert.Equal(Enumerable.Range(1, SmallSystemFixture.ProductCount), products.Select(p => p.Id));
        Assert.All(products, p => Assert.Equal($"SKU-{p.Id:D7}", p.Sku));
    }

    [Fact]
    [Lesson(Pitfalls.CatalogWriteStrategy)]
    public async Task Export_modes_send_the_same_csv_row_for_row()
    {
        var (naive, optimized) = await Http.GetInBothModesAsync(Fixture.Gateway, "/api/catalog/export");
        var catalog = (await Http.GetAsync(Fixture.Gateway, "/api/catalog/products")).Json<List<CatalogProduct>>();

        Assert.Equal("text/csv", naive.MediaType);
        Assert.Equal("Gateway.Buffering=naive, Gateway.Upstream=naive, Catalog.WriteStrategy=naive", naive.Variants);
        Assert.Equal("Gateway.Buffering=optimized, Gateway.Upstream=optimized, Catalog.WriteStrategy=optimized", optimized.Variants);
        Assert.Equal(naive.Sha256, optimized.Sha256);

        var rows = System.Text.Encoding.UTF8.GetString(optimized.Body).Split('\n', StringSplitOptions.RemoveEmptyEntries);
        Assert.Equal("id,sku,brand,name,category,price,stock", rows[0]);
        Assert.Equal(catalog.Count, rows.Length - 1);
        var first = catalog[0];
        Assert.StartsWith($"{first.Id},{first.Sku},", rows[1]);
        Assert.EndsWith(string.Create(System.Globalization.CultureInfo.InvariantCulture, $",{first.Price:0.00},{first.Stock}"), rows[1]);
    }

    [Fact]
    [Lesson(Pitfalls.FrontendCatalogClient)]
    public async Task Product_rungs_return_the_same_bytes_and_name_every_hop()
    {
        var (naive, optimized) = await Http.GetInBothModesAsync(Fixture.Gateway, "/api/products");
        var streaming = await Http.GetAsync(Fixture.Gateway, "/api/products", "streaming");

        Assert.Equal("Gateway.Buffering=naive, Gateway.Upstream=naive, Frontend.CatalogClient=naive, Frontend.Replicas=naive, Catalog.Serialization=naive", naive.Variants);
        Assert.Equal("Gateway.Buffering=optimized, Gateway.Upstream=optimized, Frontend.CatalogClient=streaming, Frontend.Replicas=optimized, Catalog.Serialization=streaming", streaming.Variants);
        Assert.Equal("Gateway.Buffering=optimized, Gateway.Upstream=optimized, Frontend.CatalogClient=optimized, Frontend.Replicas=optimized, Catalog.Serialization=optimized", optimized.Variants);
        Assert.Equal(naive.Sha256, streaming.Sha256);
        Assert.Equal(naive.Sha256, optimized.Sha256);

        var naiveItems = naive.Json<List<ProductView>>();
        Assert.Equal(SmallSystemFixture.ProductCount, naiveItems.Count);
        Assert.Equal(naiveItems, optimized.Json<List<ProductView>>());
    }

    [Fact]
    [Lesson(Pitfalls.FrontendCatalogClient)]
    public async Task Products_are_mapped_from_the_catalog_not_copied()
    {
        var catalog = (await Http.GetAsync(Fixture.Gateway, "/api/catalog/products")).Json<List<CatalogProduct>>();
        var views = (await Http.GetAsync(Fixture.Gateway, "/api/products")).Json<List<ProductView>>();

        Assert.Equal(catalog.Count, views.Count);
        foreach (var (product, view) in catalog.Zip(views))
        {
            Assert.Equal(product.Id, view.Id);
            Assert.Equal($"{product.Brand} {product.Name}", view.Title);
            Assert.Equal($"EUR {product.Price:0.00}", view.Price);
            Assert.Equal(product.Stock switch { 0 => "sold out", < 10 => "low stock", _ => "in stock" }, view.Availability);
            Assert.Equal($"/products/{product.Sku.ToLowerInvariant()}", view.Url);
        }
    }

    [Fact]
    public async Task The_mode_header_switches_every_hop_per_request()
    {
        string[] modes = ["naive", "optimized", "streaming", "naive", "streaming", "optimized"];
        var answers = await Task.WhenAll(modes.Select(mode => Http.GetAsync(Fixture.Gateway, "/api/products", mode)));

        foreach (var (mode, answer) in modes.Zip(answers))
        {
            Assert.Equal(200, answer.Status);
            Assert.Equal($"Gateway.Buffering={(mode == "streaming" ? "optimized" : mode)}, Gateway.Upstream={(mode == "streaming" ? "optimized" : mode)}, Frontend.CatalogClient={mode}, Frontend.Replicas={(mode == "streaming" ? "optimized" : mode)}, Catalog.Serialization={mode}", answer.Variants);
            Assert.Equal(mode, PerfMode.Summarize(answer.Variants));
        }

        Assert.Single(answers.Select(a => a.Sha256).Distinct());
    }

    [Fact]
    public async Task Without_header_or_flags_file_every_flag_is_optimized()
    {
        File.Delete(Fixture.System.FlagsFile);
        await Task.Delay(500, TestContext.Current.CancellationToken);

        var answer = await Http.GetAsync(Fixture.Gateway, "/api/products");

        Assert.Equal("Gateway.Buffering=optimized, Gateway.Upstream=optimized, Frontend.CatalogClient=optimized, Frontend.Replicas=optimized, Catalog.Serialization=optimized", answer.Variants);
    }

    [Theory]
    [InlineData("/api/products")]
    [InlineData("/api/catalog/products")]
    public async Task An_unknown_mode_is_a_400_problem(string path)
    {
        var answer = await Http.GetAsync(Fixture.Gateway, path, "turbo");

        Assert.Equal(400, answer.Status);
        Assert.Equal("application/problem+json", answer.MediaType);
        Assert.Equal(400, answer.Problem().Status);
        Assert.Contains("X-Perf-Mode", answer.Problem().Title);
    }

    [Fact]
    public async Task Server_spans_carry_the_variants_that_served_them()
    {
        var answer = await Http.GetAsync(Fixture.Gateway, "/api/products", "naive");
        Assert.Equal(200, answer.Status);

        // Frontend's server span: its own flag first, then the Catalog hop it called.
        Assert.True(await Fixture.Telemetry.WaitForAsync("traces", TimeSpan.FromSeconds(10),
            "frontend", "perf.variants", "Frontend.CatalogClient=naive, Frontend.Replicas=naive, Catalog.Serialization=naive"),
            "no exported span of frontend carried perf.variants");
        // Catalog's server span, with the OpenTelemetry feature-flag event.
        Assert.True(await Fixture.Telemetry.WaitForAsync("traces", TimeSpan.FromSeconds(10),
            "catalog", "feature_flag.evaluation", "feature_flag.result.variant", "Catalog.Serialization", "X-Perf-Mode"),
            "no exported span of catalog carried a feature_flag.evaluation event");
    }

    [Fact]
    public async Task The_streaming_rung_is_named_in_spans_events_and_metrics()
    {
        var answer = await Http.GetAsync(Fixture.Gateway, "/api/products", "streaming");
        Assert.Equal(200, answer.Status);

        Assert.True(await Fixture.Telemetry.WaitForAsync("traces", TimeSpan.FromSeconds(10),
            "frontend", "perf.variants", "Frontend.CatalogClient=streaming, Frontend.Replicas=optimized, Catalog.Serialization=streaming", "perf.mode"),
            "no exported span of frontend carried the streaming variants");
        Assert.True(await Fixture.Telemetry.WaitForAsync("traces", TimeSpan.FromSeconds(10),
            "catalog", "feature_flag.evaluation", "feature_flag.result.variant", "Catalog.Serialization", "streaming"),
            "no exported span of catalog carried a streaming feature_flag.evaluation event");
        Assert.True(await Fixture.Telemetry.WaitForAsync("metrics", TimeSpan.FromSeconds(15),
            "frontend", "perf.variant", "streaming", "/products"),
            "no exported metric of frontend carried perf.variant=streaming");
    }

    [Fact]
    public async Task Metrics_and_logs_are_exported()
    {
        await Http.GetAsync(Fixture.Gateway, "/api/products");

        Assert.True(await Fixture.Telemetry.WaitForAsync("metrics", TimeSpan.FromSeconds(10), "http.server.request.duration"));
        Assert.True(await Fixture.Telemetry.WaitForAsync("logs", TimeSpan.FromSeconds(10), "Seeded"));
    }
}
