using System.Diagnostics;
using System.Net.Http.Json;
using System.Net;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.ServiceDefaults.FlagSources;
using HttpPerf.Tests.Infrastructure;

namespace HttpPerf.Tests.Processes;

/// <summary>The shared flags file switches a running system, no restart.</summary>
[Collection(Lanes.Processes)]
[Trait(Kind.Name, Kind.Processes)]
public sealed class FlagsFileTests(SmallSystemFixture fixture) : SystemTests<SmallSystemFixture>(fixture)
{
    [Fact]
    public async Task Editing_the_flags_file_switches_every_running_service()
    {
        try
        {
            await FlagsFile.WriteAsync(Fixture.System.FlagsFile, new Dictionary<string, string>
            {
                [Pitfalls.GatewayBuffering] = "naive",
                [Pitfalls.CatalogSerialization] = "naive",
                [Pitfalls.FrontendCatalogClient] = "naive",
            }, TestContext.Current.CancellationToken);
            // A product list sent 2 s after the write is served the new flags, however long one takes on this machine.
            var lastServedOld = await WaitForVariantsAsync("Gateway.Buffering=naive, Gateway.Upstream=optimized, Frontend.CatalogClient=naive, Frontend.Replicas=optimized, Catalog.Serialization=naive");
            Assert.True(lastServedOld < TimeSpan.FromSeconds(2), $"a product list sent {lastServedOld.TotalSeconds:F1} s after the write was served the old flags");

            // One flag at a time: each pitfall has its own.
            await FlagsFile.WriteAsync(Fixture.System.FlagsFile, new Dictionary<string, string>
            {
                [Pitfalls.CatalogSerialization] = "naive",
                [Pitfalls.FrontendCatalogClient] = "optimized",
            }, TestContext.Current.CancellationToken);
            await WaitForVariantsAsync("Gateway.Buffering=optimized, Gateway.Upstream=optimized, Frontend.CatalogClient=optimized, Frontend.Replicas=optimized, Catalog.Serialization=naive");

            // The per-request header still wins over the file.
            var forced = await Http.GetAsync(Fixture.Gateway, "/api/products", "optimized");
            Assert.Equal("Gateway.Buffering=optimized, Gateway.Upstream=optimized, Frontend.CatalogClient=optimized, Frontend.Replicas=optimized, Catalog.Serialization=optimized", forced.Variants);
        }
        finally
        {
            File.Delete(Fixture.System.FlagsFile);
        }

        await WaitForVariantsAsync("Gateway.Buffering=optimized, Gateway.Upstream=optimized, Frontend.CatalogClient=optimized, Frontend.Replicas=optimized, Catalog.Serialization=optimized");
    }

    [Fact]
    public async Task A_flags_file_that_does_not_parse_keeps_the_last_good_flags_and_warns_once_naming_the_file_and_the_error()
    {
        const string Served = "Gateway.Buffering=optimized, Gateway.Upstream=optimized, Catalog.Serialization=naive";
        try
        {
            await FlagsFile.WriteAsync(Fixture.System.FlagsFile, new Dictionary<string, string> { [Pitfalls.CatalogSerialization] = "naive" }, TestContext.Current.CancellationToken);
            await WaitForVariantsAsync(Served, "/api/catalog/products");

            // A hand edit saved half-way (written aside, then renamed over the file, as editors save).
            var broken = Fixture.System.FlagsFile + ".edit";
            await File.WriteAllTextAsync(broken, """{ "feature_management": { "feature_flags": [ { "id": "Catalog.Serialization", """, TestContext.Current.CancellationToken);
            File.Move(broken, Fixture.System.FlagsFile, overwrite: true);

            var catalog = Fixture.System.Catalog;
            var deadline = DateTime.UtcNow.AddSeconds(10);
            while (Warnings(catalog.RecentOutput) == 0 && DateTime.UtcNow < deadline)
            {
                await Task.Delay(100, TestContext.Current.CancellationToken);
            }

            var output = catalog.RecentOutput;
            Assert.Contains($"The flags file {Fixture.System.FlagsFile} does not parse, so the last good flags stay in force", output);
            Assert.Contains("LineNumber", output); // the parser's own words: where the JSON broke
            for (var i = 0; i < 5; i++)
            {
                Assert.Equal(Served, (await Http.GetAsync(Fixture.Gateway, "/api/catalog/products")).Variants);
                await Task.Delay(200, TestContext.Current.CancellationToken);
            }

            Assert.Equal(1, Warnings(catalog.RecentOutput));

            // The admin API will not read the broken file as "all optimized" and write that back over it: it answers a
            // 503 problem, changes nothing, and every service says Degraded until the file parses again.
            var before = await File.ReadAllTextAsync(Fixture.System.FlagsFile, TestContext.Current.CancellationToken);
            using var put = new HttpRequestMessage(HttpMethod.Put, $"/admin/flags/{Pitfalls.GatewayBuffering}") { Content = JsonContent.Create("naive") };
            put.Headers.Add("X-Admin-Key", Fixture.AdminKey);
            using var refused = await Fixture.Gateway.SendAsync(put, TestContext.Current.CancellationToken);
            Assert.Equal(HttpStatusCode.ServiceUnavailable, refused.StatusCode);
            Assert.Equal("application/problem+json", refused.Content.Headers.ContentType?.MediaType);
            Assert.Equal(before, await File.ReadAllTextAsync(Fixture.System.FlagsFile, TestContext.Current.CancellationToken));
            Assert.Equal(Served, (await Http.GetAsync(Fixture.Gateway, "/api/catalog/products")).Variants);
            using var health = new HttpClient { BaseAddress = catalog.BaseAddress };
            Assert.Equal("Degraded", await health.GetStringAsync("/health", TestContext.Current.CancellationToken));
        }
        finally
        {
            File.Delete(Fixture.System.FlagsFile);
        }

        await WaitForVariantsAsync("Gateway.Buffering=optimized, Gateway.Upstream=optimized, Catalog.Serialization=optimized", "/api/catalog/products");
    }

    private static int Warnings(string output) =>
        output.Split('\n').Count(line => line.Contains("does not parse, so the last good flags stay in force", StringComparison.Ordinal));

    /// <summary>GETs <paramref name="path"/> until it is served <paramref name="expected"/>; returns when the last GET served otherwise was sent.</summary>
    private async Task<TimeSpan> WaitForVariantsAsync(string expected, string path = "/api/products")
    {
        var clock = Stopwatch.StartNew();
        var lastOther = TimeSpan.Zero;
        string last = "";
        while (lastOther < TimeSpan.FromSeconds(10))
        {
            var sent = clock.Elapsed;
            var answer = await Http.GetAsync(Fixture.Gateway, path);
            Assert.Equal(200, answer.Status);
            last = answer.Variants;
            if (last == expected)
            {
                return lastOther;
            }

            lastOther = sent;
            await Task.Delay(50, TestContext.Current.CancellationToken);
        }

        Assert.Fail($"Expected '{expected}' within 10 s; last answer was served by '{last}'.");
        return lastOther;
    }
}
