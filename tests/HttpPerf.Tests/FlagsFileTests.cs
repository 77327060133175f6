using System.Diagnostics;
using HttpPerf.ServiceDefaults.Flags;
using HttpPerf.Tests.Infrastructure;

namespace HttpPerf.Tests;

/// <summary>The shared flags file switches a running system, no restart.</summary>
[Collection(SmallSystemCollection.Name)]
public sealed class FlagsFileTests(SmallSystemFixture fixture)
{
    [Fact]
    public async Task Editing_the_flags_file_switches_every_running_service()
    {
        try
        {
            await FlagsFile.WriteAsync(fixture.System.FlagsFile, new Dictionary<string, string>
            {
                [Pitfalls.GatewayBuffering] = "naive",
                [Pitfalls.CatalogSerialization] = "naive",
                [Pitfalls.FrontendCatalogClient] = "naive",
            }, TestContext.Current.CancellationToken);
            var switchedAfter = await WaitForVariantsAsync("Gateway.Buffering=naive, Frontend.CatalogClient=naive, Catalog.Serialization=naive");
            Assert.True(switchedAfter < TimeSpan.FromSeconds(2), $"took {switchedAfter}");

            // One flag at a time: each pitfall has its own.
            await FlagsFile.WriteAsync(fixture.System.FlagsFile, new Dictionary<string, string>
            {
                [Pitfalls.CatalogSerialization] = "naive",
                [Pitfalls.FrontendCatalogClient] = "optimized",
            }, TestContext.Current.CancellationToken);
            await WaitForVariantsAsync("Gateway.Buffering=optimized, Frontend.CatalogClient=optimized, Catalog.Serialization=naive");

            // The per-request header still wins over the file.
            var forced = await Http.GetAsync(fixture.Gateway, "/api/products", "optimized");
            Assert.Equal("Gateway.Buffering=optimized, Frontend.CatalogClient=optimized, Catalog.Serialization=optimized", forced.Variants);
        }
        finally
        {
            File.Delete(fixture.System.FlagsFile);
        }

        await WaitForVariantsAsync("Gateway.Buffering=optimized, Frontend.CatalogClient=optimized, Catalog.Serialization=optimized");
    }

    private async Task<TimeSpan> WaitForVariantsAsync(string expected)
    {
        var clock = Stopwatch.StartNew();
        string last = "";
        while (clock.Elapsed < TimeSpan.FromSeconds(10))
        {
            var answer = await Http.GetAsync(fixture.Gateway, "/api/products");
            Assert.Equal(200, answer.Status);
            last = answer.Variants;
            if (last == expected)
            {
                return clock.Elapsed;
            }

            await Task.Delay(50, TestContext.Current.CancellationToken);
        }

        Assert.Fail($"Expected '{expected}' within 10 s; last answer was served by '{last}'.");
        return clock.Elapsed;
    }
}
