using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.Tests.Infrastructure;
using Microsoft.Playwright;

namespace HttpPerf.Tests.AppHost;

/// <summary>
/// Remakes the pictures of docs/pitfalls/Frontend.Grpc.md from the real Aspire dashboard, when asked (about three
/// minutes): <c>ASPIRE_DASHBOARD_SCREENSHOTS=docs/dashboard dotnet test HttpPerf.slnx --filter GrpcDashboardScreenshots</c>.
/// The AppHost with its own catalog; product lists over gRPC through the Gateway, one at a time, six forced naive and
/// six optimized; then the frontend's <c>httpperf.grpc.message.size</c> over both, and the trace of one of each.
/// </summary>
[Trait(Kind.Name, Kind.AppHost)]
public sealed class GrpcDashboardScreenshots
{
    private const string ProductList = "GET /products/grpc";

    private static CancellationToken Cancel => TestContext.Current.CancellationToken;

    [Fact]
    public async Task One_message_against_many_in_the_message_size_chart_and_in_the_traces()
    {
        var folder = DashboardPage.ScreenshotFolder("the pictures of docs/pitfalls/Frontend.Grpc.md");
        await using var system = new AppHostFixture(productCount: null);
        await system.InitializeAsync();
        await using var browser = await Chromium.LaunchAsync();
        var page = await DashboardPage.LogInAsync(browser, system);

        foreach (var mode in new[] { PerfMode.Naive, PerfMode.Optimized })
        {
            for (var i = 0; i < 6; i++)
            {
                var list = await Http.GetAsync(system.Gateway, "/api/products/grpc", mode);
                Assert.Equal(200, list.Status);
                Assert.Contains($"{Pitfalls.FrontendGrpc}={mode}", list.Variants, StringComparison.Ordinal);
            }
        }

        // The size of every message the Frontend received: one point of about 19 MB a list naive, 86 of 225 KB optimized.
        await page.GotoAsync(new Uri(system.Dashboard, "/metrics/resource/frontend?meter=HttpPerf&instrument=httpperf.grpc.message.size&duration=5&view=Graph").ToString());
        await page.WaitForTimeoutAsync(8_000);
        await page.ScreenshotAsync(new() { Path = Path.Combine(folder, "grpc-message-size.png") });

        // A product list of each: its span says how many messages it took.
        using var dashboard = new HttpClient { BaseAddress = system.Dashboard };
        dashboard.DefaultRequestHeaders.Add("x-api-key", system.DashboardApiKey);
        foreach (var (messages, picture) in new[] { ("1", "grpc-unary-trace.png"), ("86", "grpc-stream-trace.png") })
        {
            DashboardSpans.Span? span = null;
            Assert.True(await Poll.UntilAsync(
                async () => (span = (await DashboardSpans.GetAsync(dashboard, traceId: null, Cancel, resourceName: SystemContract.Frontend))
                    .LastOrDefault(s => s.Name == ProductList && s.Attributes.GetValueOrDefault("catalog.grpc.messages") == messages)) is not null,
                TimeSpan.FromSeconds(30), TimeSpan.FromSeconds(1)), $"no {ProductList} span of {messages} messages");
            await page.GotoAsync(new Uri(system.Dashboard, $"/traces/detail/{span!.TraceId}").ToString());
            await Assertions.Expect(page.GetByText(ProductList).First).ToBeVisibleAsync();
            await page.WaitForTimeoutAsync(2_000);
            await page.ScreenshotAsync(new() { Path = Path.Combine(folder, picture) });
        }
    }
}
