using System.Text;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.Tests.Infrastructure;

namespace HttpPerf.Tests.Processes;

/// <summary>
/// Frontend.Blocking on real processes: one product's page is the same bytes from both rungs (a page the Catalog does
/// not have is the same 404 problem from both), and the thread pool's runtime meters, the dashboard's view of a starved service,
/// reach the OTLP collector from the Frontend (docs/pitfalls/Frontend.Blocking.md).
/// </summary>
[Collection(Lanes.Processes)]
[Trait(Kind.Name, Kind.Processes)]
[Lesson(Pitfalls.FrontendBlocking)]
public sealed class BlockingTests(SmallSystemFixture fixture) : SystemTests<SmallSystemFixture>(fixture)
{
    [Fact]
    public async Task Both_rungs_answer_a_product_page_byte_for_byte_and_a_missing_one_with_the_same_404()
    {
        foreach (var id in new[] { 1, 17, SmallSystemFixture.ProductCount })
        {
            var (naive, optimized) = await Http.GetInBothModesAsync(Fixture.Gateway, $"/api/products/{id}");
            Assert.True(naive.Status == 200, $"{id}: {naive.Status} {Encoding.UTF8.GetString(naive.Body)}");
            Assert.Equal(200, optimized.Status);
            Assert.Contains($"{Pitfalls.FrontendBlocking}={PerfMode.Naive}", naive.Variants, StringComparison.Ordinal);
            Assert.Contains($"{Pitfalls.FrontendBlocking}={PerfMode.Optimized}", optimized.Variants, StringComparison.Ordinal);
            Assert.Equal("application/json", naive.MediaType);
            Assert.Equal(naive.Sha256, optimized.Sha256);

            // The page is the product list's view of the same product.
            var view = optimized.Json<Dictionary<string, System.Text.Json.JsonElement>>();
            Assert.Equal(id, view["id"].GetInt32());
            Assert.Equal($"/products/sku-{id:D7}", view["url"].GetString());
        }

        // A 404 is the service's problem response, whose body carries the request's own trace id: the same status and type.
        var missing = await Task.WhenAll(PerfMode.All.Select(mode => Http.GetAsync(Fixture.Gateway, $"/api/products/{SmallSystemFixture.ProductCount + 1}", mode)));
        Assert.All(missing, m => Assert.Equal(404, m.Status));
        Assert.Single(missing.Select(m => m.MediaType).Distinct());
    }

    [Fact]
    public async Task The_thread_pools_runtime_meters_reach_the_collector_from_the_Frontend()
    {
        // .NET's own "System.Runtime" meter (AddRuntimeInstrumentation subscribes to it on .NET 9 and later): the three
        // the page's walkthrough charts beside the route's latency.
        Assert.Equal(200, (await Http.GetAsync(Fixture.Gateway, "/api/products/1")).Status);
        var missing = await Fixture.Telemetry.WaitForPointsAsync(TimeSpan.FromSeconds(20), new Dictionary<string, Func<MetricPoint, bool>>
        {
            ["threads"] = p => p.Service == "frontend" && p.Metric == "dotnet.thread_pool.thread.count" && p.Value >= 1,
            ["queue"] = p => p.Service == "frontend" && p.Metric == "dotnet.thread_pool.queue.length",
            ["completed items"] = p => p.Service == "frontend" && p.Metric == "dotnet.thread_pool.work_item.count" && p.Value > 0,
        });
        Assert.Empty(missing);
    }
}
