using Bench.LocalSystem;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.ServiceDefaults.FlagSources;
using HttpPerf.Tests.Infrastructure;
using StackExchange.Redis;

namespace HttpPerf.Tests.Lessons;

/// <summary>
/// The flags in Redis when Redis stops answering without closing anything (its node lost): each read and write says
/// the store is unavailable, the one failure the services handle (the last flags kept, a 503 from the admin API),
/// rather than a timeout that stopped the Gateway (the swarm's node-kill test, docs/deploy.md).
/// </summary>
[Trait(Kind.Name, Kind.Lessons)]
public sealed class RedisFlagStoreTests
{
    [Fact]
    public async Task A_Redis_that_stops_answering_makes_reads_and_writes_unavailable_not_timeouts()
    {
        Assert.SkipUnless(RedisServer.IsInstalled, $"{RedisServer.Executable} is not installed (apt-get install redis-server; .ci/run does)");
        await using var redis = await RedisServer.StartAsync();
        var options = ConfigurationOptions.Parse(redis.ConnectionString);
        options.AsyncTimeout = options.SyncTimeout = 500;
        await using var connection = await ConnectionMultiplexer.ConnectAsync(options);
        var store = new RedisFlagStore(connection);
        await store.SetAsync(new Dictionary<string, string> { [Pitfalls.CatalogSerialization] = PerfMode.Naive }, TestRun.Cancel);
        Assert.Equal(PerfMode.Naive, (await store.ReadAsync(TestRun.Cancel))[Pitfalls.CatalogSerialization]);

        await ProcessFaults.FreezeAsync(redis.ProcessId);
        try
        {
            var read = await Assert.ThrowsAsync<FlagStoreUnavailableException>(() => store.ReadAsync(TestRun.Cancel));
            Assert.IsType<RedisTimeoutException>(read.InnerException);
            await Assert.ThrowsAsync<FlagStoreUnavailableException>(() => store.SetAsync(new Dictionary<string, string> { [Pitfalls.CatalogSerialization] = PerfMode.Optimized }, TestRun.Cancel));
        }
        finally
        {
            await ProcessFaults.ThawAsync(redis.ProcessId);
        }
    }
}
