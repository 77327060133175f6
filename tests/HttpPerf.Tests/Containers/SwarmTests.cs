using System.Diagnostics;
using System.Globalization;
using System.Security.Cryptography;
using System.Text.Json;
using Bench.LocalSystem;
using HttpPerf.ServiceDefaults;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.Tests.Infrastructure;
using static HttpPerf.Tests.Infrastructure.AdminRequest;
using static HttpPerf.Tests.Infrastructure.TestRun;

namespace HttpPerf.Tests.Containers;

/// <summary>
/// The system on a swarm of three nodes (docs/deploy.md, "On a swarm"), deployed from the stack the AppHost publishes:
/// each node's Gateway serves what process mode serves, every replicated service runs on several nodes, a flag set
/// through one Gateway reaches every replica, an upload through one node downloads through another, and the system
/// keeps answering through a rolling update and a lost node.
/// </summary>
[Collection(Lanes.Orchestrated)]
[Trait(Kind.Name, Kind.Containers)]
public sealed class SwarmTests(SwarmFixture swarm) : IClassFixture<SwarmFixture>
{
    private static readonly string[] Replicated = [SystemContract.Catalog, SystemContract.Frontend, SystemContract.Uploads];

    [Fact]
    public async Task Each_nodes_Gateway_serves_process_modes_bytes_from_replicas_on_every_node_with_flags_and_uploads_shared()
    {
        Assert.SkipWhen(swarm.Unavailable is not null, swarm.Unavailable ?? "");
        TestContext.Current.SendDiagnosticMessage($"swarm up in {swarm.UpTime.TotalSeconds:F0} s:\n{swarm.UpOutput}");

        // The product list of process mode, the reference.
        string expected;
        await using (var local = await LocalSystem.StartAsync(new LocalSystemOptions(), Cancel))
        {
            using var gateway = new HttpClient { BaseAddress = local.Gateway.BaseAddress, Timeout = TimeSpan.FromMinutes(2) };
            expected = (await Http.GetAsync(gateway, "/api/products", PerfMode.Optimized)).Sha256;
        }

        var adminKey = AdminKey();
        for (var node = 1; node <= SwarmFixture.Nodes; node++)
        {
            using var gateway = swarm.Gateway(node);
            var products = await Http.GetAsync(gateway, "/api/products");
            Assert.Equal(200, products.Status);
            Assert.True(products.Sha256 == expected, $"node-{node}'s Gateway served {products.Body.Length} bytes unlike process mode's");
        }

        // Every replicated service on two nodes or more; the Gateway on every node.
        foreach (var service in Replicated)
        {
            var nodes = (await SwarmFixture.TasksAsync(1, service)).Select(t => t.Node).Distinct().Count();
            Assert.True(nodes >= 2, $"{service} runs on {nodes} node(s)");
        }

        Assert.Equal(SwarmFixture.Nodes, (await SwarmFixture.TasksAsync(1, SystemContract.Gateway)).Select(t => t.Node).Distinct().Count());

        // An upload through node-1's Gateway downloads whole through node-2's: the replicas share one volume.
        var file = EveryRung.RandomFile(3 * 1024 * 1024);
        using (var first = swarm.Gateway(1))
        using (var second = swarm.Gateway(2))
        {
            var (receipt, _) = await EveryRung.UploadAsync(first, "/api/uploads", file, mode: null);
            var download = await Http.GetAsync(second, $"/api/uploads/{receipt.Id}");
            Assert.Equal(200, download.Status);
            Assert.Equal(Convert.ToHexStringLower(SHA256.HashData(file)), download.Sha256);

            // A flag set through node-1's Gateway: every replica of its service, on every node, serves it to a request
            // begun 2 s after (the whole catalog by its streaming rungs: the naive ones do not fit the replicas' memory
            // limit, docs/memory.md).
            try
            {
                foreach (var (flag, variant, service, path) in new[]
                {
                    (Pitfalls.CatalogSerialization, PerfMode.Streaming, SystemContract.Catalog, "/catalog/products"),
                    (Pitfalls.FrontendCatalogClient, PerfMode.Streaming, SystemContract.Frontend, "/products"),
                    (Pitfalls.UploadsDownload, PerfMode.Naive, SystemContract.Uploads, $"/uploads/{receipt.Id}"),
                    (Pitfalls.GatewayBuffering, PerfMode.Naive, SystemContract.Gateway, "/api/catalog/products/1"),
                })
                {
                    using var set = await first.SendAsync(Admin(HttpMethod.Put, $"/admin/flags/{flag}", adminKey, variant), Cancel);
                    Assert.True(set.IsSuccessStatusCode, $"PUT {flag}: {(int)set.StatusCode}");
                    var clock = Stopwatch.StartNew();
                    foreach (var (node, container) in await SwarmFixture.TasksAsync(1, service))
                    {
                        while (true)
                        {
                            var began = clock.Elapsed;
                            var headers = await SwarmFixture.GetFromReplicaAsync(node, container, path);
                            if (headers.Contains($"{flag}={variant}", StringComparison.Ordinal))
                            {
                                break;
                            }

                            Assert.True(began < TimeSpan.FromSeconds(2), $"{service} on node-{node} ({container}) served to a request begun {began.TotalMilliseconds:F0} ms after {flag}: {variant}:\n{headers}");
                            await Task.Delay(100, Cancel);
                        }
                    }
                }

                // Every replica just served a request of its own: each one's spans are on the dashboard, named by service, node and slot.
                await AssertEveryReplicaOnTheDashboardAsync();

                // The whole list by the streaming rungs (set above), through node-3: the same bytes.
                foreach (var flag in new[] { Pitfalls.UploadsDownload, Pitfalls.GatewayBuffering })
                {
                    using var set = await first.SendAsync(Admin(HttpMethod.Put, $"/admin/flags/{flag}", adminKey, PerfMode.Optimized), Cancel);
                    Assert.True(set.IsSuccessStatusCode, $"PUT {flag}: {(int)set.StatusCode}");
                }

                using var third = swarm.Gateway(3);
                await Http.GetUntilServedAsync(third, "/api/products", $"{Pitfalls.CatalogSerialization}={PerfMode.Streaming}");
                var streaming = await Http.GetAsync(third, "/api/products");
                Assert.Contains($"{Pitfalls.FrontendCatalogClient}={PerfMode.Streaming}", streaming.Variants, StringComparison.Ordinal);
                Assert.True(streaming.Sha256 == expected, $"the streaming rungs served {streaming.Body.Length} bytes unlike process mode's");
            }
            finally
            {
                using var reset = await first.SendAsync(Admin(HttpMethod.Put, "/admin/flags", adminKey, PerfMode.Optimized), Cancel);
            }
        }
    }

    [Fact]
    public async Task Under_four_product_lists_a_second_rolling_updates_fail_none_and_a_lost_nodes_tasks_run_elsewhere_within_60_s()
    {
        Assert.SkipWhen(swarm.Unavailable is not null, swarm.Unavailable ?? "");
        Assert.SkipWhen(swarm.FaultsUnasked is not null, swarm.FaultsUnasked ?? "");
        await swarm.WarmAsync();
        TestContext.Current.SendDiagnosticMessage($"warm-up: {swarm.WarmUp}");
        var victim = await BusiestNodeAsync();
        var updates = new List<(string Service, TimeSpan Began, TimeSpan Ended)>();
        var killed = TimeSpan.Zero;
        var movedAfter = TimeSpan.Zero;
        try
        {
            var load = await UnderLoadAsync(victim, async load =>
            {
                // A rolling update of Catalog.Api, then of Frontend.Api: a task at a time, each new one started before its old one stops.
                foreach (var service in new[] { SystemContract.Catalog, SystemContract.Frontend })
                {
                    var began = load.Now;
                    (await SwarmFixture.RunAsync(["update", service], TimeSpan.FromMinutes(5))).EnsureSucceeded();
                    updates.Add((service, began, load.Now));
                }

                // What was sent during the updates ends first: a list sent in an update's last second was still on its
                // way when the node was killed right after, and cut at the Gateway's 30 s (counted against the update, 2
                // of 214, in two runs). Under this load a list's tail reaches 30 to 50 s.
                await load.SettledAsync(updates[^1].Ended, TimeSpan.FromSeconds(90));

                // A node lost: its container killed.
                killed = load.Now;
                SwarmFixture.Kill(victim);
                movedAfter = await AssertTasksLeaveAsync(victim, "killed");
            });

            foreach (var (service, began, ended) in updates)
            {
                var during = load.Exchanges.Where(e => e.Start >= began && e.Start <= ended).ToList();
                TestContext.Current.SendDiagnosticMessage($"update of {service}: {(ended - began).TotalSeconds:F0} s, {during.Count} sent, {during.Count(e => e.Status != 200)} failed");
                Assert.True(during.Count > 0 && during.All(e => e.Status == 200), $"update of {service}: {during.Count(e => e.Status != 200)} of {during.Count} sent during it failed; the whole load: {load.Summary(began)}");
            }

            TestContext.Current.SendDiagnosticMessage($"node-{victim} killed: its tasks elsewhere after {movedAfter.TotalSeconds:F0} s; {load.Summary(killed)}");
            AssertNoneFailedFrom(load, killed + TimeSpan.FromSeconds(10), $"node-{victim} killed");
        }
        finally
        {
            await RestoreAsync(victim, "start-node");
        }
    }

    [Fact]
    public async Task Under_four_product_lists_a_second_a_node_cut_off_has_its_tasks_run_elsewhere_and_rejoins()
    {
        Assert.SkipWhen(swarm.Unavailable is not null, swarm.Unavailable ?? "");
        Assert.SkipWhen(swarm.FaultsUnasked is not null, swarm.FaultsUnasked ?? "");
        await swarm.WarmAsync();
        TestContext.Current.SendDiagnosticMessage($"warm-up: {swarm.WarmUp}");
        var victim = await BusiestNodeAsync();
        var cut = TimeSpan.Zero;
        var movedAfter = TimeSpan.Zero;
        try
        {
            // A node cut off from the others' network: its tasks still run, where nobody reaches them.
            var load = await UnderLoadAsync(victim, async load =>
            {
                cut = load.Now;
                (await SwarmFixture.RunAsync(["cut-node", victim.ToString(CultureInfo.InvariantCulture)], TimeSpan.FromMinutes(1))).EnsureSucceeded();
                movedAfter = await AssertTasksLeaveAsync(victim, "cut off");
            });
            TestContext.Current.SendDiagnosticMessage($"node-{victim} cut off: its tasks elsewhere after {movedAfter.TotalSeconds:F0} s; {load.Summary(cut)}");
            AssertNoneFailedFrom(load, cut + TimeSpan.FromSeconds(10), $"node-{victim} cut off");
        }
        finally
        {
            await RestoreAsync(victim, "rejoin-node");
        }

        // Back, the node stops the tasks the swarm started elsewhere meanwhile, and its Gateway serves the list again.
        var stale = await Poll.UntilAsync(async () =>
        {
            foreach (var service in Replicated)
            {
                if ((await SwarmFixture.TasksAsync(1, service)).Any(t => t.Node == victim))
                {
                    return false;
                }
            }

            return true;
        }, TimeSpan.FromSeconds(60), TimeSpan.FromSeconds(2));
        Assert.True(stale, $"node-{victim}, back, still runs tasks the swarm started elsewhere: {await SwarmFixture.InNodeAsync(1, "service", "ps", "httpperf_catalog", "httpperf_frontend", "httpperf_uploads")}");
        using var gateway = swarm.Gateway(victim);
        Assert.Equal(200, (await Http.GetAsync(gateway, "/api/products")).Status);
    }

    /// <summary>
    /// Of nodes 2 and 3 (node 1 answers the tests' questions as a manager), the one with more tasks of Catalog.Api and
    /// Frontend.Api: a fault there reaches the replicas the product list goes through.
    /// </summary>
    private static async Task<int> BusiestNodeAsync()
    {
        var tasks = (await SwarmFixture.TasksAsync(1, SystemContract.Catalog)).Concat(await SwarmFixture.TasksAsync(1, SystemContract.Frontend)).ToList();
        return tasks.Count(t => t.Node == 3) > tasks.Count(t => t.Node == 2) ? 3 : 2;
    }

    /// <summary>Two product lists a second through the Gateway of each node but <paramref name="victim"/> while <paramref name="act"/> runs; every request judged once all have ended.</summary>
    private async Task<SteadyLoad> UnderLoadAsync(int victim, Func<SteadyLoad, Task> act)
    {
        var gateways = Enumerable.Range(1, SwarmFixture.Nodes).Where(n => n != victim).Select(swarm.Gateway).ToList();
        var load = new SteadyLoad();
        using var loading = CancellationTokenSource.CreateLinkedTokenSource(Cancel);
        var running = Task.WhenAll(gateways.Select(g => load.RunAsync(g, ["/api/products"], 2, TimeSpan.FromMinutes(10), loading.Token)));
        try
        {
            await act(load);
            // On two cores the whole list takes seconds at this rate: wait for every one sent.
            load.StopAt(load.Now);
            await running;
            return load;
        }
        finally
        {
            await loading.CancelAsync();
            await running.ContinueWith(_ => { }, TaskScheduler.Default);
            gateways.ForEach(g => g.Dispose());
        }
    }

    /// <summary>The replicated services' tasks all off <paramref name="victim"/>, two of each running, within 60 s; then 15 s more of load. Returns how long they took.</summary>
    private static async Task<TimeSpan> AssertTasksLeaveAsync(int victim, string fault)
    {
        var clock = Stopwatch.StartNew();
        var moved = await Poll.UntilAsync(async () =>
        {
            foreach (var service in Replicated)
            {
                var tasks = await SwarmFixture.TasksAsync(1, service);
                if (tasks.Count < 2 || tasks.Any(t => t.Node == victim))
                {
                    return false;
                }
            }

            return true;
        }, TimeSpan.FromSeconds(60), TimeSpan.FromSeconds(2));
        var after = clock.Elapsed;
        Assert.True(moved, $"node-{victim} {fault}: its tasks did not run again on the other nodes within 60 s: {await SwarmFixture.InNodeAsync(1, "service", "ls")}");
        await Task.Delay(TimeSpan.FromSeconds(15), Cancel);
        return after;
    }

    private static void AssertNoneFailedFrom(SteadyLoad load, TimeSpan from, string fault)
    {
        var late = load.Exchanges.Where(e => e.Start >= from).ToList();
        Assert.True(late.Count > 0 && late.All(e => e.Status == 200), $"{fault}: {load.Summary(from - TimeSpan.FromSeconds(10))}");
    }

    /// <summary><paramref name="victim"/> back (<c>swarm.sh start-node</c> or <c>rejoin-node</c>), its Gateway answering, for whatever runs after.</summary>
    private async Task RestoreAsync(int victim, string command)
    {
        await SwarmFixture.RunAsync([command, victim.ToString(CultureInfo.InvariantCulture)], TimeSpan.FromMinutes(1));
        using var gateway = swarm.Gateway(victim);
        var back = await Poll.UntilAsync(async () =>
        {
            try
            {
                return (await gateway.GetAsync(SystemContract.HealthPath, Cancel)).IsSuccessStatusCode
                    && (await SwarmFixture.TasksAsync(1, SystemContract.Gateway)).Any(t => t.Node == victim);
            }
            catch (HttpRequestException)
            {
                return false;
            }
            catch (InvalidOperationException e) when (SwarmFixture.DuringElection(e.Message))
            {
                // The node back with the term it had when it was cut off can start an election: one run's managers
                // had no leader for over 30 s after a rejoin on a loaded machine. Asked again until the bound.
                return false;
            }
        }, TimeSpan.FromSeconds(120), TimeSpan.FromSeconds(2));
        if (!back)
        {
            // Said, not asserted: this runs in a finally, where a failure would hide the test's own.
            TestContext.Current.SendDiagnosticMessage($"node-{victim}'s Gateway did not serve again within 120 s of {command}: {await SwarmFixture.InNodeAsync(1, "service", "ps", "httpperf_gateway")}");
        }
    }

    /// <summary>
    /// The dashboard's telemetry API (<c>/api/telemetry/spans</c>, its key a swarm secret): for every service, a replica's
    /// spans from each node one of its tasks runs on (its instance <c>{node}-{slot}</c>), within 30 s (the exporters batch).
    /// </summary>
    private static async Task AssertEveryReplicaOnTheDashboardAsync()
    {
        var dashboardNode = (await SwarmFixture.InNodeAsync(1, "service", "ps", "httpperf_dashboard", "--filter", "desired-state=running", "--format", "{{.Node}}")).Trim().Split('\n')[0];
        using var dashboard = new HttpClient { BaseAddress = new Uri($"http://{SwarmFixture.Address(int.Parse(dashboardNode["node-".Length..], System.Globalization.CultureInfo.InvariantCulture))}:18888") };
        dashboard.DefaultRequestHeaders.Add("X-API-Key", Parameter("DASHBOARD_API_KEY"));
        var expected = new SortedSet<string>(StringComparer.Ordinal);
        foreach (var service in new[] { SystemContract.Catalog, SystemContract.Frontend, SystemContract.Uploads, SystemContract.Gateway })
        {
            foreach (var (node, _) in await SwarmFixture.TasksAsync(1, service))
            {
                expected.Add($"{service} on node-{node}");
            }
        }

        var seen = new SortedSet<string>(StringComparer.Ordinal);
        var found = await Poll.UntilAsync(async () =>
        {
            using var spans = JsonDocument.Parse(await dashboard.GetStringAsync("/api/telemetry/spans?limit=2000", Cancel));
            foreach (var resource in spans.RootElement.GetProperty("data").GetProperty("resourceSpans").EnumerateArray())
            {
                var attributes = resource.GetProperty("resource").GetProperty("attributes").EnumerateArray()
                    .ToDictionary(a => a.GetProperty("key").GetString()!, a => a.GetProperty("value").GetProperty("stringValue").GetString() ?? "");
                if (attributes.TryGetValue("service.name", out var name) && attributes.TryGetValue("service.instance.id", out var instance))
                {
                    seen.Add($"{name} on {string.Join('-', instance.Split('-').Take(2))}");
                }
            }

            return expected.IsSubsetOf(seen);
        }, TimeSpan.FromSeconds(30), TimeSpan.FromSeconds(2));
        Assert.True(found, $"the dashboard has spans of {string.Join(", ", seen)}; expected {string.Join(", ", expected)}");
    }

    /// <summary>The admin key eng/swarm/swarm.sh generated and made a swarm secret.</summary>
    private static string AdminKey() => Parameter("ADMIN_KEY");

    /// <summary>A secret parameter eng/swarm/swarm.sh generated, kept for the operator (root only).</summary>
    private static string Parameter(string name) =>
        File.ReadLines("/var/lib/httpperf-containers/swarm/parameters.env").Single(l => l.StartsWith(name + "=", StringComparison.Ordinal))[(name.Length + 1)..];
}
