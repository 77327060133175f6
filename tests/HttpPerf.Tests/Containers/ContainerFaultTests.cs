using System.Net.Http.Json;
using System.Security.Cryptography;
using Aspire.Hosting;
using Aspire.Hosting.ApplicationModel;
using HttpPerf.ServiceDefaults;
using HttpPerf.ServiceDefaults.Flags;
using HttpPerf.Tests.Infrastructure;

namespace HttpPerf.Tests.Containers;

/// <summary>
/// Faults a deployment meets, made with the engine's own verbs on the AppHost's containers (a replica killed, Redis
/// restarted and stopped, an Uploads replica killed mid-upload) under a steady load through the Gateway, every
/// request counted. Each test puts the
/// system back as it found it. Skipped, saying why, where no container engine answers. The figures each prints are
/// the ones docs/reliability.md's tables quote.
/// </summary>
public sealed class ContainerFaultTests(ContainerModeFixture system) : IClassFixture<ContainerModeFixture>
{
    private static readonly string[] Paths = ["/api/products", "/api/catalog/products"];

    private static CancellationToken Cancel => TestContext.Current.CancellationToken;

    [Fact]
    public async Task A_Catalog_and_a_Frontend_replica_killed_under_load_fail_no_request_sent_6_s_after_and_come_back()
    {
        SkipWithoutEngine();
        var load = new SteadyLoad();
        var running = load.RunAsync(system.Gateway, Paths, perSecond: 10, TimeSpan.FromSeconds(25), Cancel);
        await Task.Delay(TimeSpan.FromSeconds(5), Cancel);
        var fault = load.Now;
        ContainerEngine.Run("kill", system.ContainerIds["catalog-1"]);
        ContainerEngine.Run("kill", system.ContainerIds["frontend-1"]);
        await running;
        Report("kill catalog-1 and frontend-1", load, fault);

        // The Gateway's active health check asks every 2 s, and a GET that meets a dead replica before its headers is
        // sent again to the other (RetryOnAnotherDestination). Frontend.Api's calls to the Catalog have no health check:
        // a call on a pooled connection to the dead address fails only when the bridge gives up on it (about 3 s, no
        // host answers its ARP), and then its retry takes the next replica. So: a few failures, none after the bound.
        var failed = load.Exchanges.Where(e => e.Status != 200).ToList();
        Assert.DoesNotContain(failed, e => e.Start > fault + KillBound);
        Assert.True(failed.Count <= load.Exchanges.Count / 20, load.Summary(fault));

        foreach (var replica in new[] { "catalog-1", "frontend-1" })
        {
            await RestartAsync(replica);
        }

        await AssertTakesTrafficAsync("catalog-1", "/api/catalog/products");
        await AssertTakesTrafficAsync("frontend-1", "/api/products");
    }

    [Fact]
    public async Task Redis_restarted_and_stopped_leaves_every_replica_serving_its_last_flags_and_a_flip_after_reaches_all_within_1_s()
    {
        SkipWithoutEngine();
        var flags = system.ContainerIds[SystemContract.FlagsConnectionName];
        var naive = await system.Commands.ExecuteCommandAsync("catalog-1", $"{Pitfalls.CatalogSerialization}-{PerfMode.Naive}", Cancel);
        Assert.True(naive.Success, naive.Message);
        await AssertEveryCatalogServesAsync(PerfMode.Naive);
        try
        {
            var load = new SteadyLoad();
            var running = load.RunAsync(system.Gateway, Paths, perSecond: 10, TimeSpan.FromSeconds(40), Cancel);
            await Task.Delay(TimeSpan.FromSeconds(5), Cancel);
            var fault = load.Now;
            ContainerEngine.Run("restart", flags);
            await Task.Delay(TimeSpan.FromSeconds(5), Cancel);
            ContainerEngine.Run("stop", flags);
            await Task.Delay(TimeSpan.FromSeconds(20), Cancel);
            // Still the last flags, Redis gone.
            await AssertEveryCatalogServesAsync(PerfMode.Naive);
            ContainerEngine.Run("start", flags);
            await running;
            Report("Redis restarted, then stopped for 20 s", load, fault);
            Assert.DoesNotContain(load.Exchanges, e => e.Status != 200);

            // A flip once Redis is back (every replica connected again: Healthy, no longer Degraded) reaches every
            // replica within 1 s.
            foreach (var replica in ContainerModeFixture.ReplicasOf(SystemContract.Catalog))
            {
                using var client = system.Replica(replica);
                Assert.True(await Poll.UntilAsync(async () => await client.GetStringAsync(SystemContract.HealthPath, Cancel) == "Healthy",
                    TimeSpan.FromSeconds(30), TimeSpan.FromMilliseconds(200)), $"{replica} not Healthy 30 s after Redis came back");
            }

            ExecuteCommandResult? back = null;
            Assert.True(await Poll.UntilAsync(async () => (back = await system.Commands.ExecuteCommandAsync("catalog-2", $"{Pitfalls.CatalogSerialization}-{PerfMode.Optimized}", Cancel)).Success,
                TimeSpan.FromSeconds(30), TimeSpan.FromSeconds(1)), back?.Message);
            await AssertEveryCatalogServesAsync(PerfMode.Optimized);
        }
        finally
        {
            ContainerEngine.Run("start", flags);
            await Poll.UntilAsync(async () => (await system.Commands.ExecuteCommandAsync(SystemContract.Gateway, $"all-flags-{PerfMode.Optimized}", Cancel)).Success, TimeSpan.FromSeconds(30), TimeSpan.FromSeconds(1));
        }
    }

    [Fact]
    public async Task An_Uploads_replica_killed_mid_upload_answers_no_2xx_leaves_no_partial_file_and_the_other_serves_every_acknowledged_upload()
    {
        SkipWithoutEngine();
        using var first = system.Replica("uploads-1");
        using var second = system.Replica("uploads-2");
        var acknowledged = new List<(string Id, string Sha256)>();
        for (var i = 0; i < 5; i++)
        {
            var file = EveryRung.RandomFile(512 * 1024);
            var (receipt, _) = await EveryRung.UploadAsync(first, "/uploads", file, PerfMode.Optimized);
            acknowledged.Add((receipt.Id, Convert.ToHexStringLower(SHA256.HashData(file))));
        }

        // An 8 MiB upload at 2 MiB/s, killed 2 s in.
        var body = Multipart.Body([new Multipart.Part("cut.bin", "application/octet-stream", EveryRung.RandomFile(8 * 1024 * 1024))]);
        using var request = new HttpRequestMessage(HttpMethod.Post, "/uploads") { Content = PacedContent.Multipart(body, 2 * 1024 * 1024) };
        var upload = first.SendAsync(request, Cancel);
        await Task.Delay(TimeSpan.FromSeconds(2), Cancel);
        ContainerEngine.Run("kill", system.ContainerIds["uploads-1"]);
        var status = 0;
        try
        {
            using var response = await upload;
            status = (int)response.StatusCode;
        }
        catch (HttpRequestException)
        {
            // The connection died with the replica: an error, as it should be.
        }

        Assert.False(status is >= 200 and < 300, $"a 2xx ({status}) for an upload cut by a kill");
        foreach (var (id, sha256) in acknowledged)
        {
            var download = await Http.GetAsync(second, $"/uploads/{id}");
            Assert.Equal(200, download.Status);
            Assert.Equal(sha256, download.Sha256);
        }

        // Back, the replica (a new container, so a new instance) clears what the dead one left in .incoming.
        await RestartAsync("uploads-1");
        var volume = ContainerEngine.Run("volume", "inspect", "--format", "{{.Mountpoint}}", system.UploadsVolume).Trim();
        var leftovers = Directory.GetFiles(Path.Combine(volume, "uploads", ".incoming"), "*", SearchOption.AllDirectories)
            .Where(f => Path.GetFileName(f) != ".lock").ToList();
        Assert.Empty(leftovers);
    }

    /// <summary>After a kill, requests sent this much later do not fail: a health interval (2 s) and the ~3 s a dead address on the bridge takes to fail.</summary>
    private static readonly TimeSpan KillBound = TimeSpan.FromSeconds(6);

    private async Task RestartAsync(string replica)
    {
        var start = await system.Commands.ExecuteCommandAsync(replica, KnownResourceCommands.StartCommand, Cancel);
        Assert.True(start.Success, $"{replica}: {start.Message}");
        using var healthy = new CancellationTokenSource(TimeSpan.FromMinutes(2));
        var state = await system.App.ResourceNotifications.WaitForResourceHealthyAsync(replica, healthy.Token);
        if (state.Snapshot.Properties.FirstOrDefault(p => p.Name == "container.id")?.Value is { } id)
        {
            system.ContainerIds[replica] = id.ToString()!;
        }
    }

    // Through the Gateway, the replica's own count of response bytes grows: it is back in the rotation.
    private async Task AssertTakesTrafficAsync(string replica, string path)
    {
        using var direct = system.Replica(replica);
        var before = await ResponseBytesAsync(direct);
        var grew = await Poll.UntilAsync(async () =>
        {
            for (var i = 0; i < 10; i++)
            {
                Assert.Equal(200, (await Http.GetAsync(system.Gateway, path)).Status);
            }

            return await ResponseBytesAsync(direct) > before;
        }, TimeSpan.FromSeconds(30), TimeSpan.FromMilliseconds(200));
        Assert.True(grew, $"{replica} served nothing through the Gateway in 30 s");
    }

    private static async Task<long> ResponseBytesAsync(HttpClient replica) =>
        (await replica.GetFromJsonAsync<RuntimeCounters>("/runtime", Cancel))!.ResponseBodyBytes;

    private async Task AssertEveryCatalogServesAsync(string variant)
    {
        var clock = System.Diagnostics.Stopwatch.StartNew();
        foreach (var replica in ContainerModeFixture.ReplicasOf(SystemContract.Catalog))
        {
            using var client = system.Replica(replica);
            string served;
            while (!(served = (await Http.GetAsync(client, "/catalog/products")).Variants).Contains($"{Pitfalls.CatalogSerialization}={variant}", StringComparison.Ordinal)
                   && clock.Elapsed < TimeSpan.FromSeconds(1))
            {
                await Task.Delay(20, Cancel);
            }

            Assert.Contains($"{Pitfalls.CatalogSerialization}={variant}", served, StringComparison.Ordinal);
        }
    }

    private static void Report(string fault, SteadyLoad load, TimeSpan at) =>
        TestContext.Current.TestOutputHelper?.WriteLine($"{fault}: {load.Summary(at)}");

    private void SkipWithoutEngine() => Assert.SkipWhen(system.Unavailable is not null, system.Unavailable ?? "");
}
