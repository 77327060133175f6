using HttpPerf.Tests.Infrastructure;
using LoadGen.Load;

namespace HttpPerf.Tests;

[Collection(SmallSystemCollection.Name)]
public sealed class LoadGenTests(SmallSystemFixture fixture)
{
    [Fact]
    public async Task A_run_interleaves_the_modes_and_records_each_in_its_own_histogram()
    {
        var stats = await LoadRunner.RunAsync(fixture.Gateway, "/api/products", ["naive", "optimized"], requests: 10, concurrency: 3, TestContext.Current.CancellationToken);

        Assert.Equal(["naive", "optimized"], stats.Select(s => s.Mode));
        var expectedBody = (await Http.GetAsync(fixture.Gateway, "/api/products")).Body.Length;
        foreach (var mode in stats)
        {
            Assert.Equal(5, mode.Count);
            Assert.Equal(0, mode.Errors);
            Assert.Equal(expectedBody, mode.MeanBodyBytes);
            Assert.InRange(mode.PercentileMs(50), 0.01, 60_000);
            Assert.True(mode.PercentileMs(99) >= mode.PercentileMs(50));
        }
    }

    [Fact]
    public async Task Failed_requests_are_counted_as_errors()
    {
        var stats = await LoadRunner.RunAsync(fixture.Gateway, "/api/uploads/not-an-id", ["optimized"], requests: 3, concurrency: 1, TestContext.Current.CancellationToken);

        Assert.Equal(3, stats[0].Count);
        Assert.Equal(3, stats[0].Errors);
    }
}
