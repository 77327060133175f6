using System.Diagnostics;
using Aspire.Hosting.Testing;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.Tests.Infrastructure;

namespace HttpPerf.Tests.AppHost;

/// <summary>
/// Follows the walkthrough of docs/pitfalls/Frontend.Blocking.md on the real Aspire dashboard and remakes its pictures,
/// when asked (about four minutes): <c>ASPIRE_DASHBOARD_SCREENSHOTS=docs/dashboard dotnet test HttpPerf.slnx --filter BlockingDashboardScreenshots</c>.
/// The AppHost with a 2,000-product catalog; the page's command, LoadGen's closed loop of 64 product pages in flight
/// straight to the Frontend, with Frontend.Blocking optimized, then naive (flipped from the frontend's command menu),
/// then optimized again while the pool settles; beside it one <c>/health</c> at a time. Then the frontend's thread-pool
/// charts and its request duration over the three.
/// </summary>
[Collection(Lanes.Orchestrated)]
[Trait(Kind.Name, Kind.AppHost)]
public sealed class BlockingDashboardScreenshots
{
    [Fact]
    public async Task The_thread_pool_climbs_and_every_route_slows_under_the_naive_rung_then_settles()
    {
        var appHost = new AppHostFixture(AppHostFixture.SmallCatalog);
        await using var run = await OptInRun.DashboardPicturesAsync("the pictures of docs/pitfalls/Frontend.Blocking.md", appHost);
        var frontend = appHost.App.GetEndpoint(SystemContract.Frontend, "http");
        // The service itself, below the launcher whose id the resource's snapshot gives.
        var pid = ProcessTree.WithDescendants(appHost.ProcessIds[SystemContract.Frontend])
            .Where(p => File.Exists($"/proc/{p}/cmdline") && File.ReadAllText($"/proc/{p}/cmdline").Contains("Frontend.Api", StringComparison.Ordinal)).Last();

        var report = new List<string>();
        var phases = new List<(string Rung, int Peak, double HealthMaxMs)>();
        foreach (var (rung, requests) in new[] { (PerfMode.Optimized, 20_000), (PerfMode.Naive, 2_500), (PerfMode.Optimized, 20_000) })
        {
            var flip = await run.AppHost.Commands.ExecuteCommandAsync(SystemContract.Frontend, $"{Pitfalls.FrontendBlocking}-{rung}", Cancel);
            Assert.True(flip.Success, flip.Message);
            await Http.GetUntilServedAsync(run.AppHost.Gateway, "/api/products/1", $"{Pitfalls.FrontendBlocking}={rung}");

            // The page's command, in process: 64 pages in flight, each client sending its next when its last answered.
            var threadsAtStart = Bench.Benches.BlockingBench.Threads(pid);
            using var stop = CancellationTokenSource.CreateLinkedTokenSource(Cancel);
            var watch = WatchAsync(frontend, pid, stop.Token);
            var clock = Stopwatch.StartNew();
            var root = new System.CommandLine.RootCommand { LoadGen.Commands.RunCommand.Create() };
            var exit = await root.Parse(["run", "--url", frontend.ToString(), "--scenario", "/products/1", "--concurrency", "64",
                "--requests", requests.ToString(System.Globalization.CultureInfo.InvariantCulture), "--mode", "flags", "--warmup", "0"]).InvokeAsync(cancellationToken: Cancel);
            Assert.Equal(0, exit);
            await stop.CancelAsync();
            var (peak, healthMax) = await watch;
            phases.Add((rung, peak, healthMax));
            report.Add($"{rung}: {requests:N0} pages at 64 in flight in {clock.Elapsed.TotalSeconds:F0} s; threads {threadsAtStart} -> {peak}; /health at most {healthMax:F0} ms");
            await Task.Delay(TimeSpan.FromSeconds(10), Cancel);
        }

        File.WriteAllLines(Path.Combine(run.Folder, "blocking-run.txt"), report);
        TestContext.Current.TestOutputHelper?.WriteLine(string.Join(Environment.NewLine, report));

        // What the page says the charts show: the threads climb under naive and not under optimized, and /health waits.
        Assert.True(phases[1].Peak > phases[0].Peak + 10, string.Join("; ", report));
        Assert.True(phases[1].HealthMaxMs > 10 * Math.Max(phases[0].HealthMaxMs, 10), string.Join("; ", report));

        foreach (var (instrument, meter, picture) in new[]
        {
            ("dotnet.thread_pool.thread.count", "System.Runtime", "blocking-thread-count.png"),
            ("dotnet.thread_pool.queue.length", "System.Runtime", "blocking-queue-length.png"),
            ("http.server.request.duration", "Microsoft.AspNetCore.Hosting", "blocking-request-duration.png"),
        })
        {
            await DashboardPage.OpenChartAsync(run.Page, SystemContract.Frontend, instrument, minutes: 5, meter: meter);
            await run.Page.WaitForTimeoutAsync(8_000);
            await run.ShootAsync(run.Page, picture);
        }
    }

    /// <summary>Until <paramref name="stop"/>: the Frontend's peak thread count (from /proc), and its slowest /health, asked one at a time.</summary>
    private static async Task<(int Peak, double HealthMaxMs)> WatchAsync(Uri frontend, int pid, CancellationToken stop)
    {
        using var client = new HttpClient { BaseAddress = frontend, Timeout = TimeSpan.FromSeconds(60) };
        var peak = 0;
        var sampler = Task.Run(async () =>
        {
            while (!stop.IsCancellationRequested)
            {
                peak = Math.Max(peak, Bench.Benches.BlockingBench.Threads(pid));
                await Task.Delay(100, CancellationToken.None);
            }
        }, CancellationToken.None);
        var healthMax = 0.0;
        while (!stop.IsCancellationRequested)
        {
            var sent = Stopwatch.StartNew();
            using var response = await client.GetAsync("/health", CancellationToken.None);
            healthMax = Math.Max(healthMax, sent.Elapsed.TotalMilliseconds);
            await Task.Delay(100, CancellationToken.None);
        }

        await sampler;
        return (peak, healthMax);
    }
}
