using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.ServiceDefaults.FlagSources;
using HttpPerf.Tests.Infrastructure;
using LoadGen.Load;

namespace HttpPerf.Tests.Processes;

[Collection(Lanes.Processes)]
[Trait(Kind.Name, Kind.Processes)]
public sealed class LoadGenTests(SmallSystemFixture fixture) : SystemTests<SmallSystemFixture>(fixture)
{
    [Fact]
    public async Task A_run_interleaves_the_modes_and_records_each_in_its_own_histogram()
    {
        var stats = await LoadRunner.RunAsync(Fixture.Gateway, "/api/products", ["naive", "optimized"], requests: 10, concurrency: 3, TestContext.Current.CancellationToken);

        Assert.Equal(["naive", "optimized"], stats.Select(s => s.Mode));
        var expectedBody = (await Http.GetAsync(Fixture.Gateway, "/api/products")).Body.Length;
        foreach (var mode in stats)
        {
            Assert.Equal(5, mode.Count);
            Assert.Equal(0, mode.Errors);
            Assert.Equal(expectedBody, mode.MeanBodyBytes);
            Assert.InRange(mode.PercentileMs(50), 0.01, 60_000);
            Assert.True(mode.PercentileMs(99) >= mode.PercentileMs(50));
        }
    }

    [Theory]
    [InlineData("--scenario", "catalog", "--requests", "4", "--warmup", "2")]
    [InlineData("--scenario", "/api/catalog/products", "--rate", "10", "--duration", "00:00:01")]
    [InlineData("--scenario", "products=1,upload=1,download=1", "--size-mb", "1", "--requests", "12")]
    public async Task The_run_command_drives_the_gateway_from_its_command_line(params string[] load)
    {
        var root = new System.CommandLine.RootCommand { LoadGen.Commands.RunCommand.Create() };
        string[] args = ["run", "--url", Fixture.System.Gateway.BaseAddress.ToString(), "--concurrency", "2", "--mode", "both", .. load];

        var exitCode = await root.Parse(args).InvokeAsync(cancellationToken: TestContext.Current.CancellationToken);

        Assert.Equal(0, exitCode);
        Assert.Equal(1, await root.Parse(["run", "--url", "not-a-url"]).InvokeAsync(cancellationToken: TestContext.Current.CancellationToken));
    }

    [Fact]
    public void A_weighted_mix_cycles_its_scenarios_and_measures_each_in_every_mode()
    {
        var mix = Scenario.Parse("products=2,upload=1", ["naive", "optimized"], uploadBytes: 1024);

        var keys = Enumerable.Range(0, 12).Select(i => mix.Next(i)).Select(r => { r.Request.Dispose(); return r.Key; }).ToList();

        Assert.Equal(
            ["products/naive", "products/optimized", "products/naive", "products/optimized", "upload/naive", "upload/optimized"],
            keys.Take(6));
        Assert.Equal(keys.Take(6), keys.Skip(6));
        Assert.Throws<ArgumentException>(() => Scenario.Parse("teleport", ["naive"], 1));
        Assert.Throws<ArgumentException>(() => Scenario.Parse("products=0", ["naive"], 1));
    }

    [Fact]
    public async Task Following_the_flags_sends_no_mode_header_and_a_flag_flip_changes_what_serves_the_load()
    {
        var load = Scenario.Parse("catalog,export", new ModeControl([ModeControl.FollowFlags]), uploadBytes: 1024);
        var (key, probe) = load.Next(0);
        using (probe)
        {
            Assert.Equal("catalog/flags", key);
            Assert.False(probe.Headers.Contains(Http.ModeHeader));
        }

        try
        {
            await FlagsFile.WriteAsync(Fixture.System.FlagsFile, Pitfalls.All.ToDictionary(p => p.Flag, _ => "naive"), TestContext.Current.CancellationToken);
            Assert.Equal("naive", await ServedAfterAFlipAsync(load, "naive"));

            File.Delete(Fixture.System.FlagsFile);
            Assert.Equal("optimized", await ServedAfterAFlipAsync(load, "optimized"));
        }
        finally
        {
            File.Delete(Fixture.System.FlagsFile);
        }
    }

    /// <summary>Sends the load two requests at a time until they are served by <paramref name="expected"/> (the flags file takes under 2 s to reach every service).</summary>
    private async Task<string> ServedAfterAFlipAsync(Scenario load, string expected)
    {
        var deadline = DateTime.UtcNow.AddSeconds(10);
        IReadOnlyDictionary<string, long> served;
        do
        {
            var stats = await LoadRunner.RunAsync(Fixture.Gateway, load.Next, requests: 2, concurrency: 1, TestContext.Current.CancellationToken);
            Assert.Equal(["catalog/flags", "export/flags"], stats.Select(s => s.Mode));
            Assert.All(stats, s => Assert.Equal(0, s.Errors));
            served = stats.SelectMany(s => s.Served).GroupBy(p => p.Key).ToDictionary(g => g.Key, g => g.Sum(p => p.Value));
            if (served.Keys.SequenceEqual([expected]))
            {
                return expected;
            }

            await Task.Delay(100, TestContext.Current.CancellationToken);
        }
        while (DateTime.UtcNow < deadline);

        return string.Join(", ", served.Select(s => $"{s.Key} {s.Value}"));
    }

    [Fact]
    public async Task Failed_requests_are_counted_as_errors()
    {
        var stats = await LoadRunner.RunAsync(Fixture.Gateway, "/api/uploads/not-an-id", ["optimized"], requests: 3, concurrency: 1, TestContext.Current.CancellationToken);

        Assert.Equal(3, stats[0].Count);
        Assert.Equal(3, stats[0].Errors);
    }
}
