using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.Tests.Infrastructure;

namespace HttpPerf.Tests.AppHost;

/// <summary>
/// Remakes the pictures of docs/pitfalls/Frontend.Grpc.md from the real Aspire dashboard, when asked (about three
/// minutes): <c>ASPIRE_DASHBOARD_SCREENSHOTS=docs/dashboard dotnet test HttpPerf.slnx --filter GrpcDashboardScreenshots</c>.
/// The AppHost with its own catalog; product lists over gRPC through the Gateway, one at a time, six forced naive and
/// six optimized; then the frontend's <c>httpperf.grpc.message.size</c> over both, and the trace of one of each.
/// </summary>
[Collection(Lanes.Orchestrated)]
[Trait(Kind.Name, Kind.AppHost)]
public sealed class GrpcDashboardScreenshots
{
    private const string ProductList = "GET /products/grpc";

    [Fact]
    public async Task One_message_against_many_in_the_message_size_chart_and_in_the_traces()
    {
        await using var run = await OptInRun.DashboardPicturesAsync("the pictures of docs/pitfalls/Frontend.Grpc.md", new AppHostFixture(productCount: null));

        foreach (var mode in new[] { PerfMode.Naive, PerfMode.Optimized })
        {
            for (var i = 0; i < 6; i++)
            {
                var list = await Http.GetAsync(run.AppHost.Gateway, "/api/products/grpc", mode);
                Assert.Equal(200, list.Status);
                Assert.Contains($"{Pitfalls.FrontendGrpc}={mode}", list.Variants, StringComparison.Ordinal);
            }
        }

        // The size of every message the Frontend received: one point of about 19 MB a list naive, 86 of 225 KB optimized.
        await DashboardPage.OpenChartAsync(run.Page, SystemContract.Frontend, "httpperf.grpc.message.size", minutes: 5, meter: "HttpPerf");
        await run.Page.WaitForTimeoutAsync(8_000);
        await run.ShootAsync(run.Page, "grpc-message-size.png");

        // A product list of each: its span says how many messages it took.
        using var dashboard = DashboardSpans.Client(run.AppHost);
        foreach (var (messages, picture) in new[] { ("1", "grpc-unary-trace.png"), ("86", "grpc-stream-trace.png") })
        {
            DashboardSpans.Span? span = null;
            Assert.True(await Poll.UntilAsync(
                async () => (span = (await DashboardSpans.GetAsync(dashboard, traceId: null, Cancel, resourceName: SystemContract.Frontend))
                    .LastOrDefault(s => s.Name == ProductList && s.Attributes.GetValueOrDefault("catalog.grpc.messages") == messages)) is not null,
                TimeSpan.FromSeconds(30), TimeSpan.FromSeconds(1)), $"no {ProductList} span of {messages} messages");
            await DashboardPage.OpenTraceAsync(run.Page, span!.TraceId, ProductList);
            await run.ShootAsync(run.Page, picture);
        }
    }
}
