using System.Diagnostics;
using System.Security.Cryptography;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.Tests.Infrastructure;
using Bench.LocalSystem;

namespace HttpPerf.Tests.Processes;

/// <summary>
/// Frontend.Replicas' optimized rung after the headers: a product list whose Catalog replica freezes (SIGSTOP) in the
/// middle of its body, at a random moment, ten times. The Frontend finds the replica silent past its learnt bound,
/// asks the other for the products after the last one it has whole, and the client's product list is the same bytes,
/// within the healthy p99 + 2 s. Each freeze lasts until the product list ends, or 5 s: a read that waited for the thaw
/// would pass the bound. The same for the Gateway's own relay of the catalog, and for a download the Gateway relays from one of two Uploads replicas (one shared
/// volume): it reads the rest from the other with a Range request. Its page: docs/pitfalls/Frontend.Replicas.md.
/// </summary>
[Collection(Lanes.Processes)]
[Trait(Kind.Name, Kind.Processes)]
[Lesson(Pitfalls.FrontendReplicas)]
public sealed class MidBodyFreezeTests
{
    private const int Freezes = 10;

    [Theory]
    [InlineData("/api/products", Freezes)] // the Frontend reads on
    [InlineData("/api/catalog/products", Freezes / 2)] // the Gateway's relay reads on
    public async Task A_Catalog_replica_frozen_mid_body_costs_a_product_list_or_the_relayed_catalog_no_byte_and_less_than_two_seconds(string path, int freezes)
    {
        // About 10 MB of catalog: long enough a body to freeze in its middle.
        await using var system = await LocalSystem.StartAsync(new LocalSystemOptions { Replicas = 2, ProductCount = 40_000 }, Cancel);
        using var client = Client(system);
        var resumes = new Lines([system.Gateway, .. system.FrontendReplicas], "mid-body after product");

        var expected = await GetAsync(client, path);
        Assert.Equal(200, expected.Status);
        var healthy = new List<TimeSpan>();
        for (var i = 0; i < 20; i++)
        {
            var list = await GetAsync(client, path);
            Assert.Equal(expected.Sha256, list.Sha256);
            healthy.Add(list.Elapsed);
        }

        var ordered = healthy.Order().ToList();
        var bound = ordered[^1] + TimeSpan.FromSeconds(2); // 20 lists: the p99 is the slowest
        var median = ordered[ordered.Count / 2];
        var seed = Environment.TickCount;
        var random = new Random(seed);
        var report = new List<string>();
        var frozen = 0;
        for (var i = 0; frozen < freezes && i < 8 * freezes; i++)
        {
            var list = GetAsync(client, path);
            // A random moment inside the body: between a twentieth and two fifths of a healthy product list (the
            // Catalog is done sending well before the Frontend is done with it).
            await Task.Delay(median * (0.05 + 0.35 * random.NextDouble()), Cancel);
            if (await ServingReplicaAsync(system.CatalogReplicas) is not { } serving)
            {
                await list;
                continue;
            }

            frozen++;
            await serving.FreezeAsync();
            try
            {
                await Task.WhenAny(list, Task.Delay(TimeSpan.FromSeconds(5), Cancel));
            }
            finally
            {
                await serving.ThawAsync();
            }

            var fetched = await list;
            report.Add($"{fetched.Status} in {fetched.Elapsed.TotalMilliseconds:F0} ms");
            Assert.True(fetched.Status == 200 && fetched.Sha256 == expected.Sha256 && fetched.Elapsed <= bound,
                $"{path} {frozen} with its Catalog replica frozen mid-body: {fetched.Status}, {(fetched.Sha256 == expected.Sha256 ? "whole" : "not the same bytes")}, " +
                $"{fetched.Elapsed.TotalMilliseconds:F0} ms (bound {bound.TotalMilliseconds:F0} ms; seed {seed}; {string.Join("; ", report)})");
            // Let the Frontends take the thawed replica back before the next freeze.
            await Task.Delay(TimeSpan.FromSeconds(1.5), Cancel);
        }

        await Poll.UntilAsync(() => resumes.Count >= freezes / 2, TimeSpan.FromSeconds(5)); // the logger's queue, as below
        var summary = $"healthy p99 {ordered[^1].TotalMilliseconds:F0} ms, median {median.TotalMilliseconds:F0} ms; {frozen} freezes, {resumes.Count} resumes; seed {seed}; {string.Join("; ", report)}";
        TestContext.Current.TestOutputHelper?.WriteLine(summary);
        // Each freeze met the Catalog's request in flight; most meet its body still to be sent (the rest of one that has
        // all been sent waits in the sockets, and needs no resume): each of those is a resume.
        Assert.Equal(freezes, frozen);
        Assert.True(resumes.Count >= freezes / 2, summary);
    }

    [Fact]
    public async Task An_Uploads_replica_frozen_mid_download_costs_the_relayed_download_no_byte_and_less_than_two_seconds()
    {
        await using var system = await LocalSystem.StartAsync(new LocalSystemOptions { Replicas = 2, ProductCount = 2_000 }, Cancel);
        using var client = Client(system);
        var resumes = new Lines([system.Gateway], "the rest asked of");

        var id = await LoadGen.Load.SyntheticFileContent.StoreAsync(client, 48L << 20, Cancel);
        var path = $"/api/uploads/{id}";
        // A client that reads 1 MiB every 25 ms: the download takes over a second, and the replica is mid-body a while.
        var healthy = await SlowDownloadAsync(client, path, freezeAfter: null, system);
        Assert.Equal(200, healthy.Status);
        var bound = healthy.Elapsed + TimeSpan.FromSeconds(2);
        var report = new List<string>();
        for (var i = 0; i < 3; i++)
        {
            await Task.Delay(TimeSpan.FromSeconds(1.5), Cancel);
            var frozen = await SlowDownloadAsync(client, path, freezeAfter: TimeSpan.FromMilliseconds(200 + 150 * i), system);
            report.Add($"{frozen.Status} in {frozen.Elapsed.TotalMilliseconds:F0} ms");
            Assert.True(frozen.Status == 200 && frozen.Sha256 == healthy.Sha256 && frozen.Elapsed <= bound,
                $"download {i} with its Uploads replica frozen mid-body: {frozen.Status}, {(frozen.Sha256 == healthy.Sha256 ? "whole" : "not the same bytes")}, " +
                $"{frozen.Elapsed.TotalMilliseconds:F0} ms (bound {bound.TotalMilliseconds:F0} ms; {string.Join("; ", report)})");
        }

        // The Gateway's console logger writes from a queue of its own: the last resume's line may reach this process a
        // moment after the download it served has ended (CI run 32 counted 2 of 3 when the downloads had ended).
        await Poll.UntilAsync(() => resumes.Count >= 3, TimeSpan.FromSeconds(5));
        var summary = $"healthy {healthy.Elapsed.TotalMilliseconds:F0} ms; {resumes.Count} resumes; {string.Join("; ", report)}";
        TestContext.Current.TestOutputHelper?.WriteLine(summary);
        Assert.True(resumes.Count >= 3, summary);
    }

    // Reads the download slowly; after `freezeAfter`, freezes the Uploads replica serving it until the read ends or 5 s.
    private static async Task<(int Status, string Sha256, TimeSpan Elapsed)> SlowDownloadAsync(HttpClient client, string path, TimeSpan? freezeAfter, LocalSystem system)
    {
        var clock = Stopwatch.StartNew();
        using var response = await client.GetAsync(path, HttpCompletionOption.ResponseHeadersRead, Cancel);
        await using var body = await response.Content.ReadAsStreamAsync(Cancel);
        using var hash = IncrementalHash.CreateHash(HashAlgorithmName.SHA256);
        var buffer = new byte[1 << 20];
        ServiceProcess? frozen = null;
        var thawAt = TimeSpan.MaxValue;
        try
        {
            int read;
            while ((read = await body.ReadAtLeastAsync(buffer, buffer.Length, throwOnEndOfStream: false, Cancel)) > 0)
            {
                hash.AppendData(buffer, 0, read);
                await Task.Delay(25, Cancel);
                if (frozen is null && clock.Elapsed >= freezeAfter && await ServingReplicaAsync(system.UploadsReplicas) is { } serving)
                {
                    frozen = serving;
                    thawAt = clock.Elapsed + TimeSpan.FromSeconds(5);
                    await serving.FreezeAsync();
                }

                if (frozen is not null && clock.Elapsed >= thawAt)
                {
                    await frozen.ThawAsync();
                    frozen = null;
                    freezeAfter = null;
                }
            }
        }
        finally
        {
            if (frozen is not null)
            {
                await frozen.ThawAsync();
            }
        }

        return ((int)response.StatusCode, Convert.ToHexString(hash.GetHashAndReset()), clock.Elapsed);
    }

    private static async Task<(int Status, string Sha256, TimeSpan Elapsed)> GetAsync(HttpClient client, string path)
    {
        var clock = Stopwatch.StartNew();
        using var response = await client.GetAsync(path, HttpCompletionOption.ResponseContentRead, Cancel);
        var body = await response.Content.ReadAsByteArrayAsync(Cancel);
        return ((int)response.StatusCode, Convert.ToHexString(SHA256.HashData(body)), clock.Elapsed);
    }

    private static HttpClient Client(LocalSystem system)
    {
        var client = new HttpClient { BaseAddress = system.Gateway.BaseAddress, Timeout = TimeSpan.FromSeconds(60) };
        client.DefaultRequestHeaders.Add(Http.ModeHeader, PerfMode.Optimized);
        return client;
    }

    /// <summary>Counts the log lines of <c>services</c> that contain <c>text</c>: the resumes their logs report.</summary>
    private sealed class Lines
    {
        private int _count;

        public Lines(IEnumerable<ServiceProcess> services, string text)
        {
            foreach (var service in services)
            {
                service.Output += line =>
                {
                    if (line.Contains(text, StringComparison.Ordinal))
                    {
                        Interlocked.Increment(ref _count);
                    }
                };
            }
        }

        public int Count => Volatile.Read(ref _count);
    }

    // The replica sending a body now: a request in flight besides the /runtime call that asks, and its response bytes
    // growing (a health probe in flight on the other replica is neither).
    private static async Task<ServiceProcess?> ServingReplicaAsync(IEnumerable<ServiceProcess> replicas)
    {
        var before = new Dictionary<ServiceProcess, long>();
        foreach (var replica in replicas)
        {
            before[replica] = (await replica.ReadRuntimeCountersAsync(Cancel)).ResponseBodyBytes;
        }

        await Task.Delay(30, Cancel);
        foreach (var (replica, bytes) in before)
        {
            var now = await replica.ReadRuntimeCountersAsync(Cancel);
            if (now.ActiveRequests > 1 && now.ResponseBodyBytes > bytes)
            {
                return replica;
            }
        }

        return null;
    }
}
