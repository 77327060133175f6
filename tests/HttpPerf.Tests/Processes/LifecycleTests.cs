using HttpPerf.Tests.Infrastructure;
using Bench.LocalSystem;

namespace HttpPerf.Tests.Processes;

/// <summary>Start healthy, fail clearly when a dependency is gone, stop cleanly on SIGTERM.</summary>
[Collection(Lanes.Processes)]
[Trait(Kind.Name, Kind.Processes)]
public sealed class LifecycleTests
{
    [Fact]
    public async Task Services_start_healthy_report_a_missing_dependency_and_stop_cleanly()
    {
        await using var system = await LocalSystem.StartAsync(new LocalSystemOptions { ProductCount = 100 }, TestContext.Current.CancellationToken);

        foreach (var service in system.Services)
        {
            using var client = new HttpClient { BaseAddress = service.BaseAddress };
            foreach (var probe in new[] { "/health", "/alive" })
            {
                var answer = await Http.GetAsync(client, probe);
                Assert.True(answer.Status == 200, $"{service.Name}{probe} answered {answer.Status}");
                Assert.Equal("Healthy", System.Text.Encoding.UTF8.GetString(answer.Body));
            }
        }

        // No admin key configured: the admin routes do not exist.
        using (var gatewayClient = new HttpClient { BaseAddress = system.Gateway.BaseAddress })
        {
            Assert.Equal(404, (await Http.GetAsync(gatewayClient, "/admin/flags")).Status);
        }

        Assert.Equal(0, await system.Catalog.StopAsync(TimeSpan.FromSeconds(15)));

        // Frontend cannot reach the Catalog: a 502 problem in both modes, never a 500 or a hang.
        using var gateway = new HttpClient { BaseAddress = system.Gateway.BaseAddress, Timeout = TimeSpan.FromSeconds(60) };
        foreach (var mode in new[] { "naive", "optimized" })
        {
            var answer = await Http.GetAsync(gateway, "/api/products", mode);
            Assert.Equal(502, answer.Status);
            Assert.Equal("application/problem+json", answer.MediaType);
        }

        // The Gateway's own route to the Catalog fails the same way.
        Assert.Equal(502, (await Http.GetAsync(gateway, "/api/catalog/products")).Status);

        foreach (var service in new[] { system.Gateway, system.Frontend, system.Uploads })
        {
            Assert.Equal(0, await service.StopAsync(TimeSpan.FromSeconds(15)));
        }
    }
}

/// <summary>Each service's own runtime counters, which a benchmark reads before and after a run.</summary>
[Collection(Lanes.Processes)]
[Trait(Kind.Name, Kind.Processes)]
public sealed class RuntimeCountersTests(SmallSystemFixture fixture) : SystemTests<SmallSystemFixture>(fixture)
{
    [Fact]
    public async Task A_naive_catalog_request_shows_as_allocations_in_the_catalog()
    {
        var before = await Fixture.System.Catalog.ReadRuntimeCountersAsync(TestContext.Current.CancellationToken);

        var answer = await Http.GetAsync(Fixture.Gateway, "/api/catalog/products", "naive");

        var after = await Fixture.System.Catalog.ReadRuntimeCountersAsync(TestContext.Current.CancellationToken);
        Assert.Equal(200, answer.Status);
        // The naive writer materializes every product and serializes through a buffer: at least the body's size.
        // (Background work, such as exporting telemetry, only adds to the difference.)
        Assert.True(after.AllocatedBytes - before.AllocatedBytes >= answer.Body.Length,
            $"catalog allocated {after.AllocatedBytes - before.AllocatedBytes} bytes for a {answer.Body.Length}-byte body");
        Assert.True(after.CpuSeconds >= before.CpuSeconds);
        Assert.True(after.Gen0Collections >= before.Gen0Collections);
        Assert.True(after.WorkingSetBytes > 0);
    }
}
