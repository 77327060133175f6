using System.Diagnostics;
using System.Net.Http.Json;
using System.Net;
using System.Security.Cryptography;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.ServiceDefaults.FlagSources;
using HttpPerf.Tests.Infrastructure;
using Bench.LocalSystem;

namespace HttpPerf.Tests.Processes;

/// <summary>
/// Past one host: two replicas each of Catalog.Api, Frontend.Api and Uploads.Api (one shared uploads directory)
/// behind one Gateway, with the flags in a real <c>redis-server</c> (<c>ConnectionStrings__flags</c>, no flags file).
/// One run, in order: a flag change reaches every replica, uploads are served by any replica, the Gateway
/// balances, a killed replica costs no request, and a Redis outage changes no flag.
/// </summary>
[Collection(Lanes.Processes)]
[Trait(Kind.Name, Kind.Processes)]
public sealed class ReplicaTests
{
    private const int ProductCount = 2_000;

    [Fact]
    public async Task Replicas_share_flags_in_Redis_and_uploads_are_balanced_survive_a_killed_replica_and_keep_their_flags_through_a_Redis_outage()
    {
        if (!RedisServer.IsInstalled)
        {
            Assert.Skip($"{RedisServer.Executable} is not installed (apt-get install redis-server; .ci/run does)");
        }

        await using var redis = await RedisServer.StartAsync();
        await using var receiver = await OtlpReceiver.StartAsync();
        var adminKey = $"replica-admin-key-{Guid.NewGuid():N}";
        var options = new LocalSystemOptions
        {
            Replicas = 2,
            ProductCount = ProductCount,
            RedisConnectionString = redis.ConnectionString,
            AdminKey = adminKey,
            // Room for the ten uploads below (about 1 MB) and one more of 600 KB, not two.
            Environment = new Dictionary<string, string>(receiver.ExporterEnvironment) { [SystemContract.UploadsMaxStoredBytes] = "2000000" },
        };
        await using var system = await LocalSystem.StartAsync(options, Cancel);
        using var gateway = new HttpClient { BaseAddress = system.Gateway.BaseAddress };
        gateway.DefaultRequestHeaders.Add("X-Admin-Key", adminKey);

        // A flag set through the Gateway reaches both Catalog replicas, asked directly, within 2 s.
        var took = await SetFlagAsync(gateway, system.CatalogReplicas, Pitfalls.CatalogSerialization, PerfMode.Naive);
        Assert.True(took < TimeSpan.FromSeconds(2), $"both Catalog replicas served naive after {took}");
        Assert.False(File.Exists(system.FlagsFile), "with Redis configured, no flags file is written");

        // The Gateway's audit: that change is one record, and so is a write to Redis by anything but the admin API.
        await using (var writer = await StackExchange.Redis.ConnectionMultiplexer.ConnectAsync(redis.ConnectionString))
        {
            await writer.GetDatabase().HashSetAsync(RedisFlagStore.Key, Pitfalls.CatalogWriteStrategy, PerfMode.Naive);
            await writer.GetSubscriber().PublishAsync(RedisFlagStore.Changed, "set");
        }

        var byRedis = $"Flag {Pitfalls.CatalogWriteStrategy} changed from optimized to naive via redis";
        Assert.True(await Poll.UntilAsync(() => AuditLines(system, byRedis) == 1, TimeSpan.FromSeconds(20)), system.Gateway.RecentOutput);
        await Task.Delay(TimeSpan.FromSeconds(2), Cancel);
        Assert.Equal(1, AuditLines(system, byRedis));
        Assert.Equal(1, AuditLines(system, $"Flag {Pitfalls.CatalogSerialization} changed from optimized to naive via admin-api"));

        // Ten uploads through the Gateway: each downloads whole from both Uploads replicas.
        for (var i = 0; i < 10; i++)
        {
            var bytes = RandomNumberGenerator.GetBytes(100_000 + i);
            using var posted = await gateway.PostAsync("/api/uploads", new MultipartFormDataContent { { new ByteArrayContent(bytes), "file", $"replica-{i}.bin" } }, Cancel);
            Assert.Equal(HttpStatusCode.Created, posted.StatusCode);
            var receipt = Assert.Single((await posted.Content.ReadFromJsonAsync<List<UploadReceipt>>(Cancel))!);
            foreach (var replica in system.UploadsReplicas)
            {
                using var direct = new HttpClient { BaseAddress = replica.BaseAddress };
                var read = await Http.GetAsync(direct, $"/uploads/{receipt.Id}");
                Assert.Equal(200, read.Status);
                Assert.Equal(Convert.ToHexStringLower(SHA256.HashData(bytes)), read.Sha256);
            }
        }

        // The quota is shared through Redis: 600 KB fits on one replica, and then not on the other.
        var quota = new List<HttpStatusCode>();
        foreach (var replica in system.UploadsReplicas)
        {
            using var direct = new HttpClient { BaseAddress = replica.BaseAddress };
            using var posted = await direct.PostAsync("/uploads", new MultipartFormDataContent { { new ByteArrayContent(new byte[600_000]), "file", "quota.bin" } }, Cancel);
            quota.Add(posted.StatusCode);
        }

        Assert.Equal([HttpStatusCode.Created, HttpStatusCode.InsufficientStorage], quota);

        // A delete on one replica gives the shared quota back: the 600 KB now fit on the other.
        var quotaFile = Directory.GetDirectories(system.UploadsDataDirectory).Where(d => new FileInfo(Path.Combine(d, "data")) is { Exists: true, Length: 600_000 }).Select(Path.GetFileName).Single();
        using (var first = new HttpClient { BaseAddress = system.UploadsReplicas[0].BaseAddress })
        using (var deleted = await first.DeleteAsync($"/uploads/{quotaFile}", Cancel))
        {
            Assert.Equal(HttpStatusCode.NoContent, deleted.StatusCode);
        }

        using (var second = new HttpClient { BaseAddress = system.UploadsReplicas[1].BaseAddress })
        using (var posted = await second.PostAsync("/uploads", new MultipartFormDataContent { { new ByteArrayContent(new byte[600_000]), "file", "quota.bin" } }, Cancel))
        {
            Assert.Equal(HttpStatusCode.Created, posted.StatusCode);
        }

        // Twenty product lists through the Gateway: both Frontend replicas serve some.
        var before = await Task.WhenAll(system.FrontendReplicas.Select(r => r.ReadRuntimeCountersAsync(Cancel)));
        for (var i = 0; i < 20; i++)
        {
            Assert.Equal(200, (await Http.GetAsync(gateway, "/api/products", PerfMode.Optimized)).Status);
        }

        var after = await Task.WhenAll(system.FrontendReplicas.Select(r => r.ReadRuntimeCountersAsync(Cancel)));
        var served = before.Zip(after, (b, a) => a.ResponseBodyBytes - b.ResponseBodyBytes).ToList();
        Assert.All(served, bytes => Assert.True(bytes > 100_000, $"bytes served by each Frontend replica: {string.Join(", ", served)}"));

        // One Catalog replica dies under load: only the requests in flight on it fail (at most one per client
        // loop), and 3 s later every catalog GET through the Gateway is whole.
        using var survivor = new HttpClient { BaseAddress = system.CatalogReplicas[1].BaseAddress };
        var whole = await Http.GetAsync(survivor, "/catalog/products", PerfMode.Optimized);
        var killed = system.CatalogReplicas[0];
        var (requests, failures) = await UnderLoadAsync(gateway, whole.Sha256, clients: 4, TimeSpan.FromSeconds(4), killAfter: TimeSpan.FromSeconds(1), killed.Kill);
        var report = string.Join("; ", failures.Select(f => $"started {f.Started.TotalMilliseconds:F0} ms, ended {f.Ended.TotalMilliseconds:F0} ms after the kill: {f.Why}"));
        TestContext.Current.TestOutputHelper?.WriteLine($"replica killed under load: {failures.Count} of {requests} catalog GETs failed ({report})");
        Assert.True(failures.Count <= 4, $"{failures.Count} of {requests} failed: {report}");
        Assert.All(failures, f => Assert.True(f.Started <= TimeSpan.Zero, $"a request sent after the kill failed: {report}"));
        await Task.Delay(TimeSpan.FromSeconds(3), Cancel);
        for (var i = 0; i < 10; i++)
        {
            var read = await Http.GetAsync(gateway, "/api/catalog/products", PerfMode.Optimized);
            Assert.Equal(200, read.Status);
            Assert.Equal(whole.Sha256, read.Sha256);
        }

        // Frontend.Api's Catalog client too: a call that cannot connect is retried at once on the other replica.
        for (var i = 0; i < 10; i++)
        {
            Assert.Equal(200, (await Http.GetAsync(gateway, "/api/products", PerfMode.Optimized)).Status);
        }

        // It comes back, and takes its flags from Redis.
        await system.StartCatalogAsync(options, killed.BaseAddress, Cancel);
        await killed.DisposeAsync();
        await WaitServedAsync(system.CatalogReplicas, Pitfalls.CatalogSerialization, PerfMode.Naive);

        // Redis goes away: the replicas keep serving naive, say Degraded, and the admin API answers a 503 problem.
        await redis.StopAsync();
        foreach (var replica in system.CatalogReplicas)
        {
            using var direct = new HttpClient { BaseAddress = replica.BaseAddress };
            Assert.Contains("Catalog.Serialization=naive", (await Http.GetAsync(direct, "/catalog/products")).Variants);
            await WaitUntilAsync(async () => await direct.GetStringAsync("/health", Cancel) == "Degraded", "Degraded health without Redis");
        }

        using (var refused = await PutAsync(gateway, Pitfalls.CatalogSerialization, PerfMode.Optimized))
        {
            Assert.Equal(HttpStatusCode.ServiceUnavailable, refused.StatusCode);
            Assert.Equal("application/problem+json", refused.Content.Headers.ContentType?.MediaType);
        }

        // Redis comes back (empty: no persistence): each service reconnects by itself, the flags it served are
        // written back, and a new change reaches both replicas within 2 s.
        await redis.StartAgainAsync();
        foreach (var service in system.Services)
        {
            using var direct = new HttpClient { BaseAddress = service.BaseAddress };
            await WaitUntilAsync(async () => await direct.GetStringAsync("/health", Cancel) == "Healthy", $"{service.Name} healthy again");
        }

        // Once (run 10 of stop 70, as in the test below at stop 69) the Gateway refused this connection right after its
        // /health said Healthy: the failure then says whether it had exited, and what it last wrote.
        List<FlagState>? listed = null;
        var readFlags = await Record.ExceptionAsync(async () => listed = await gateway.GetFromJsonAsync<List<FlagState>>("/admin/flags", Cancel));
        Assert.True(readFlags is null, $"{readFlags?.Message}; the Gateway {(system.Gateway.HasExited ? "had exited" : "was running")}; it last wrote: {system.Gateway.RecentOutput[^Math.Min(3000, system.Gateway.RecentOutput.Length)..]}");
        Assert.Equal(PerfMode.Naive, listed!.Single(f => f.Flag == Pitfalls.CatalogSerialization).Variant);
        took = await SetFlagAsync(gateway, system.CatalogReplicas, Pitfalls.CatalogSerialization, PerfMode.Optimized);
        Assert.True(took < TimeSpan.FromSeconds(2), $"both Catalog replicas served optimized after {took}");

        // Redis in the traces only inside a request (the quota's calls under their upload): none of the flag store's
        // loads, subscriptions and the Gateway's audit polls (every 10 s, here for longer than that) as a trace of its own.
        await Task.Delay(TimeSpan.FromSeconds(1), Cancel);
        var redisSpans = receiver.Spans().Where(s => s["db.system"] == "redis" || s["db.system.name"] == "redis").ToList();
        Assert.Contains(redisSpans, s => s.Service == SystemContract.Uploads && s.ParentSpanId != "");
        Assert.DoesNotContain(redisSpans, s => s.ParentSpanId == "");
    }

    /// <summary>
    /// A service whose Redis is away when it starts still starts (a subscription that cannot be sent yet must not
    /// stop the host), serves every flag optimized and says Degraded, then loads and follows Redis once it is back.
    /// </summary>
    [Fact]
    public async Task A_system_started_while_Redis_is_away_serves_every_flag_optimized_then_follows_Redis_when_it_is_back()
    {
        if (!RedisServer.IsInstalled)
        {
            Assert.Skip($"{RedisServer.Executable} is not installed (apt-get install redis-server; .ci/run does)");
        }

        await using var redis = await RedisServer.StartAsync();
        await redis.StopAsync();
        var adminKey = $"replica-admin-key-{Guid.NewGuid():N}";
        var options = new LocalSystemOptions { ProductCount = ProductCount, RedisConnectionString = redis.ConnectionString, AdminKey = adminKey };
        await using var system = await LocalSystem.StartAsync(options, Cancel);
        using var catalog = new HttpClient { BaseAddress = system.CatalogReplicas[0].BaseAddress };
        Assert.Equal("Degraded", await catalog.GetStringAsync("/health", Cancel));
        Assert.All((await catalog.GetFromJsonAsync<Dictionary<string, string>>("/flags", Cancel))!.Values, v => Assert.Equal(PerfMode.Optimized, v));

        await redis.StartAgainAsync();
        await WaitUntilAsync(async () => await catalog.GetStringAsync("/health", Cancel) == "Healthy", "Catalog healthy once Redis is back");
        using var gateway = new HttpClient { BaseAddress = system.Gateway.BaseAddress };
        gateway.DefaultRequestHeaders.Add("X-Admin-Key", adminKey);
        await WaitUntilAsync(async () => (await gateway.GetAsync("/admin/flags", Cancel)).IsSuccessStatusCode, "the admin API reading Redis");
        // Once (1 run in 3 with the lanes side by side) the Gateway refused this PUT's connection right after answering the
        // admin API: the failure then says whether it had exited, and what it last wrote.
        var took = TimeSpan.Zero;
        var set = await Record.ExceptionAsync(async () => took = await SetFlagAsync(gateway, system.CatalogReplicas, Pitfalls.CatalogSerialization, PerfMode.Naive));
        Assert.True(set is null, $"{set?.Message}; the Gateway {(system.Gateway.HasExited ? "had exited" : "was running")}; it last wrote: {system.Gateway.RecentOutput[^Math.Min(3000, system.Gateway.RecentOutput.Length)..]}");
        Assert.True(took < TimeSpan.FromSeconds(2), $"the Catalog served naive after {took}");
    }

    /// <summary>
    /// <paramref name="clients"/> loops of catalog GETs through the Gateway for <paramref name="duration"/>, with
    /// <paramref name="kill"/> run after <paramref name="killAfter"/>: how many requests ran, and how long after the
    /// kill (once the process is gone) each failed one started and ended, and why (a failure is anything but a 200 with the whole body).
    /// </summary>
    private static async Task<(int Requests, List<(TimeSpan Started, TimeSpan Ended, string Why)> Failures)> UnderLoadAsync(
        HttpClient gateway, string sha256, int clients, TimeSpan duration, TimeSpan killAfter, Action kill)
    {
        var clock = Stopwatch.StartNew();
        var requests = 0;
        var failures = new List<(TimeSpan Started, TimeSpan Ended, string Why)>();
        var loops = Enumerable.Range(0, clients).Select(_ => Task.Run(async () =>
        {
            while (clock.Elapsed < duration)
            {
                Interlocked.Increment(ref requests);
                var started = clock.Elapsed;
                string? failure;
                try
                {
                    var read = await Http.GetAsync(gateway, "/api/catalog/products", PerfMode.Optimized);
                    failure = read.Status == 200 && read.Sha256 == sha256 ? null : $"{read.Status}, {read.Body.Length} bytes";
                }
                catch (HttpRequestException cut)
                {
                    failure = cut.Message; // the body was cut mid-way
                }

                if (failure is not null)
                {
                    lock (failures)
                    {
                        failures.Add((started, clock.Elapsed, failure));
                    }
                }
            }
        })).ToList();
        await Task.Delay(killAfter, Cancel);
        kill(); // returns once the process is gone: a request sent after this cannot have reached it
        var killedAt = clock.Elapsed;
        await Task.WhenAll(loops);
        return (requests, failures.Select(f => (f.Started - killedAt, f.Ended - killedAt, f.Why)).ToList());
    }

    private sealed record FlagState(string Flag, string Service, string Variant, string? Serving);

    private static Task<HttpResponseMessage> PutAsync(HttpClient gateway, string flag, string variant) =>
        gateway.PutAsJsonAsync($"/admin/flags/{flag}", variant, Cancel);

    /// <summary>Sets a flag through the admin API; how long until every replica, asked directly, resolves it.</summary>
    /// <summary>How many of the Gateway's recent console lines hold <paramref name="text"/>.</summary>
    private static int AuditLines(LocalSystem system, string text) =>
        system.Gateway.RecentOutput.Split('\n').Count(line => line.Contains(text, StringComparison.Ordinal));

    private static async Task<TimeSpan> SetFlagAsync(HttpClient gateway, IReadOnlyList<ServiceProcess> replicas, string flag, string variant)
    {
        using var response = await PutAsync(gateway, flag, variant);
        Assert.Equal(HttpStatusCode.NoContent, response.StatusCode);
        var clock = Stopwatch.StartNew();
        await WaitServedAsync(replicas, flag, variant);
        return clock.Elapsed;
    }

    private static async Task WaitServedAsync(IReadOnlyList<ServiceProcess> replicas, string flag, string variant)
    {
        foreach (var replica in replicas)
        {
            using var direct = new HttpClient { BaseAddress = replica.BaseAddress };
            await WaitUntilAsync(
                async () => (await direct.GetFromJsonAsync<Dictionary<string, string>>("/flags", Cancel))![flag] == variant,
                $"{replica.BaseAddress} serving {flag}={variant}");
        }
    }

    private static async Task WaitUntilAsync(Func<Task<bool>> condition, string what) =>
        Assert.True(await Poll.UntilAsync(condition, TimeSpan.FromSeconds(15), TimeSpan.FromMilliseconds(50)), $"timed out waiting for {what}");
}
