using System.Diagnostics;
using System.Globalization;
using System.Net;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.Tests.Infrastructure;
using Bench.LocalSystem;

namespace HttpPerf.Tests.Processes;

/// <summary>
/// The connection-stickiness pitfall: where one address stands for several replicas (a Compose service name, a
/// Kubernetes Service; here Debian's haproxy in TCP mode, balancing connections round-robin), the Gateway's pooled
/// connections stay on the replica they reached first. A second Catalog replica starts while four clients are
/// already busy: with pooled connections kept forever (the platform's default) it never sees a request; with a
/// pooled-connection lifetime, it takes its share as the connections are renewed.
/// </summary>
[Collection(Lanes.Processes)]
[Trait(Kind.Name, Kind.Processes)]
public sealed class ConnectionSpreadTests
{
    [Theory]
    [InlineData("-00:00:00.001", 0.0, 0.02)] // Timeout.InfiniteTimeSpan: SocketsHttpHandler's default
    [InlineData("00:00:02", 0.15, 1.0)]
    public async Task A_replica_started_behind_one_address_gets_requests_only_when_pooled_connections_are_renewed(string lifetime, double minShare, double maxShare)
    {
        if (!File.Exists("/usr/sbin/haproxy"))
        {
            Assert.Skip("/usr/sbin/haproxy is not installed (apt-get install haproxy; .ci/run does)");
        }

        var work = Directory.CreateTempSubdirectory("httpperf-spread-").FullName;
        var catalog = new Dictionary<string, string> { [SystemContract.CatalogProductCount] = "2000", [SystemContract.CatalogDataDirectory] = work };
        var (frontPort, laterPort) = (Ports.Free(), Ports.Free());
        await using var first = await StartAsync("Catalog.Api", catalog);
        var config = Path.Combine(work, "haproxy.cfg");
        await File.WriteAllTextAsync(config, $"""
            defaults
                mode tcp
                retries 3
                option redispatch
                timeout connect 1s
                timeout client 60s
                timeout server 60s
            listen catalog
                bind 127.0.0.1:{frontPort}
                balance roundrobin
                server first {first.BaseAddress.Host}:{first.BaseAddress.Port} check inter 200ms
                server later 127.0.0.1:{laterPort} check inter 200ms

            """, Cancel); // haproxy wants the last line ended
        using var haproxy = Process.Start(new ProcessStartInfo("/usr/sbin/haproxy", ["-f", config]) { RedirectStandardError = true, RedirectStandardOutput = true })!;
        var said = new System.Collections.Concurrent.ConcurrentQueue<string>();
        haproxy.ErrorDataReceived += (_, line) => said.Enqueue(line.Data ?? "");
        haproxy.OutputDataReceived += (_, line) => said.Enqueue(line.Data ?? "");
        haproxy.BeginErrorReadLine();
        haproxy.BeginOutputReadLine();
        await Task.Delay(500, Cancel);
        Assert.False(haproxy.HasExited, $"haproxy exited: {string.Join(Environment.NewLine, said)}");

        try
        {
            await using var gateway = await StartAsync("Gateway", new()
            {
                ["services__catalog__http__0"] = $"http://127.0.0.1:{frontPort}",
                [SystemContract.PooledConnectionLifetime] = lifetime,
            });
            using var client = new HttpClient { BaseAddress = gateway.BaseAddress };
            await Task.Delay(TimeSpan.FromSeconds(1), Cancel); // haproxy's checks mark the later replica down first
            using var stop = new CancellationTokenSource();
            var loops = Enumerable.Range(0, 4).Select(_ => LoopAsync(client, stop.Token)).ToList();

            // The second replica starts while the clients are busy; haproxy sees it up within 200 ms.
            await Task.Delay(TimeSpan.FromSeconds(2), Cancel);
            await using var later = await StartAsync("Catalog.Api", new(catalog) { ["ASPNETCORE_URLS"] = $"http://127.0.0.1:{laterPort}" });
            await Task.Delay(TimeSpan.FromSeconds(1), Cancel);
            var before = await Task.WhenAll(first.ReadRuntimeCountersAsync(Cancel), later.ReadRuntimeCountersAsync(Cancel));
            await Task.Delay(TimeSpan.FromSeconds(8), Cancel);
            var after = await Task.WhenAll(first.ReadRuntimeCountersAsync(Cancel), later.ReadRuntimeCountersAsync(Cancel));
            await stop.CancelAsync();
            var requests = (await Task.WhenAll(loops)).Sum();

            var (toFirst, toLater) = (after[0].ResponseBodyBytes - before[0].ResponseBodyBytes, after[1].ResponseBodyBytes - before[1].ResponseBodyBytes);
            var share = (double)toLater / (toFirst + toLater);
            TestContext.Current.TestOutputHelper?.WriteLine(FormattableString.Invariant(
                $"pooled connection lifetime {lifetime}: {requests} requests; in the 8 s after the later replica was up it served {share:P0} of the bytes ({toLater:N0} of {toFirst + toLater:N0})"));
            Assert.InRange(share, minShare, maxShare);
        }
        finally
        {
            haproxy.Kill();
            await haproxy.WaitForExitAsync(Cancel);
            Directory.Delete(work, recursive: true);
        }
    }

    private static async Task<int> LoopAsync(HttpClient client, CancellationToken stop)
    {
        var requests = 0;
        while (!stop.IsCancellationRequested)
        {
            using var response = await client.GetAsync("/api/catalog/products", CancellationToken.None);
            Assert.Equal(HttpStatusCode.OK, response.StatusCode);
            await response.Content.CopyToAsync(Stream.Null, CancellationToken.None);
            requests++;
        }

        return requests;
    }

    private static Task<ServiceProcess> StartAsync(string project, Dictionary<string, string> environment) =>
        ServiceProcess.StartAsync(project, LocalSystem.AssemblyPath(project, LocalSystem.CurrentConfiguration), environment, Cancel);
}
