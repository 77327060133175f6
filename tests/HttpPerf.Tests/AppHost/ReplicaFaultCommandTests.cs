extern alias AppHostAssembly;

using System.Globalization;
using Aspire.Hosting.Testing;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.Tests.Infrastructure;

namespace HttpPerf.Tests.AppHost;

/// <summary>
/// The AppHost's process mode runs two Catalog replicas, and each has the dashboard's fault commands
/// (AppHost/ReplicaFaults.cs): "freeze" stops the process (SIGSTOP) and lets it go on by itself; "starve" moves it into
/// a cgroup with a tenth of a core, and back. Under product lists through the Gateway, the optimized Frontend.Replicas
/// answers every one while catalog-2 is frozen. A fault lasts 8 s here (<c>AppHost:FaultSeconds</c>), 60 s by default.
/// An instance of its own, since it ends it: stopping the AppHost then leaves no service process, within 10 s.
/// </summary>
[Collection(Lanes.Orchestrated)]
[Trait(Kind.Name, Kind.AppHost)]
public sealed class ReplicaFaultCommandTests
{
    private const string Replica = SystemContract.Catalog + "-2";
    private static readonly TimeSpan Fault = TimeSpan.FromSeconds(8);

    [Fact]
    public async Task Freeze_stops_a_Catalog_replica_for_its_time_and_the_optimized_product_list_routes_around_it_then_starve_throttles_it_and_a_stop_leaves_no_process()
    {
        var system = new AppHostFixture(AppHostFixture.SmallCatalog, $"--AppHost:FaultSeconds={Fault.TotalSeconds}");
        IReadOnlyList<int> processes;
        var stopping = new System.Diagnostics.Stopwatch();
        try
        {
            await system.InitializeAsync();
            processes = [.. system.ProcessIds.Values.SelectMany(ProcessTree.WithDescendants)];
            Assert.True(processes.Count >= 4, $"service processes found: {processes.Count}");
            await FreezeThenStarveAsync(system);
        }
        finally
        {
            stopping.Start();
            await system.DisposeAsync();
        }

        // Stopping the AppHost leaves nothing running, the replica that was frozen and starved included, and promptly: the
        // dashboard is gone first, and a service's last export then gives up after 2 s (OTEL_EXPORTER_OTLP_TIMEOUT,
        // AppHost/ServiceResourceExtensions.cs), where the exporter's default 10 s held every stop 10 s. Under those 10 s,
        // however long this machine takes to stop the rest.
        while (processes.Any(ProcessTree.IsAlive) && stopping.Elapsed < TimeSpan.FromSeconds(30))
        {
            await Task.Delay(250, Cancel);
        }

        Assert.DoesNotContain(processes, ProcessTree.IsAlive);
        Assert.True(stopping.Elapsed < TimeSpan.FromSeconds(10), $"the AppHost and its services took {stopping.Elapsed.TotalSeconds:F1} s to stop");
    }

    private static async Task FreezeThenStarveAsync(AppHostFixture system)
    {
        Assert.True(system.App.ResourceNotifications.TryGetCurrentState(Replica, out var replica), $"no resource {Replica}");
        var pid = Convert.ToInt32(replica.Snapshot.Properties.Single(p => p.Name == "executable.pid").Value, CultureInfo.InvariantCulture);
        system.Gateway.DefaultRequestHeaders.Add(Http.ModeHeader, PerfMode.Optimized);
        await new SteadyLoad().RunAsync(system.Gateway, ["/api/products"], perSecond: 4, TimeSpan.FromSeconds(3), Cancel);

        // catalog-2 reports its telemetry as the catalog service, under an instance name that is its resource's own
        // ("catalog-2-abcd", not "catalog-abcd"): the dashboard's telemetry finds it by the resource's name, as the
        // resource's menu does to offer its logs, traces and metrics.
        using (var dashboard = new HttpClient { BaseAddress = system.Dashboard })
        {
            dashboard.DefaultRequestHeaders.Add("x-api-key", system.DashboardApiKey);
            IReadOnlyList<DashboardSpans.Span> spans = [];
            await Poll.UntilAsync(async () => (spans = await DashboardSpans.GetAsync(dashboard, traceId: null, Cancel, resourceName: replica.ResourceId)).Count > 0, TimeSpan.FromSeconds(30), TimeSpan.FromSeconds(1));
            Assert.NotEmpty(spans);
            Assert.All(spans, s => Assert.True(s.Service == SystemContract.Catalog && $"{s.Service}-{s.Instance}" == replica.ResourceId,
                $"a span of {replica.ResourceId} from {s.Service}-{s.Instance}"));
        }

        var load = new SteadyLoad();
        var running = load.RunAsync(system.Gateway, ["/api/products"], perSecond: 4, Fault + TimeSpan.FromSeconds(6), Cancel);
        await Task.Delay(TimeSpan.FromSeconds(1), Cancel);
        var frozenAt = load.Now;
        var freeze = await system.Commands.ExecuteCommandAsync(Replica, "freeze-60s", Cancel);
        Assert.True(freeze.Success, freeze.Message);
        // Under the AppHost the project's process is `dotnet run`; the service is its child: every one stopped, and
        // catalog-2 itself silent.
        var tree = ProcessTree.WithDescendants(pid);
        Assert.True(tree.Count >= 1);
        Assert.True(await Poll.UntilAsync(() => tree.All(p => State(p) == 'T'), TimeSpan.FromSeconds(2)), $"catalog-2's processes: {string.Join(", ", tree.Select(p => $"{p} {State(p)}"))}");
        using (var direct = new HttpClient { BaseAddress = new Uri(system.App.GetEndpoint(Replica, "http").ToString()), Timeout = TimeSpan.FromSeconds(1) })
        {
            await Assert.ThrowsAnyAsync<TaskCanceledException>(() => direct.GetAsync(SystemContract.AlivePath, Cancel));
        }

        await running;
        Assert.All(tree, p => Assert.NotEqual('T', State(p)));
        TestContext.Current.TestOutputHelper?.WriteLine($"catalog-2 frozen for {Fault.TotalSeconds} s by the dashboard's command: {load.Summary(frozenAt)}");
        Assert.All(load.Exchanges, e => Assert.True(e.Status == 200 && e.Elapsed < TimeSpan.FromSeconds(2),
            $"begun {(e.Start - frozenAt).TotalSeconds:F1} s after the freeze: {e.Status} in {e.Elapsed.TotalMilliseconds:F0} ms ({load.Summary(frozenAt)})"));

        // Starve: a cgroup of its own with a CPU quota, then back where it was. cgroups need root.
        if (Environment.UserName != "root")
        {
            return;
        }

        var starve = await system.Commands.ExecuteCommandAsync(Replica, "starve-60s", Cancel);
        Assert.True(starve.Success, starve.Message);
        Assert.All(tree, p => Assert.Contains($"httpperf-starved-{pid}", File.ReadAllText($"/proc/{p}/cgroup")));
        Assert.Equal(200, (await Http.GetAsync(system.Gateway, "/api/products", PerfMode.Optimized)).Status);
        await Poll.UntilAsync(() => tree.All(p => !File.ReadAllText($"/proc/{p}/cgroup").Contains("httpperf-starved", StringComparison.Ordinal)), Fault + TimeSpan.FromSeconds(5));
        Assert.All(tree, p => Assert.DoesNotContain("httpperf-starved", File.ReadAllText($"/proc/{p}/cgroup")));
    }

    // The process's state in /proc/<pid>/stat: R, S, D, or T when stopped.
    private static char State(int pid)
    {
        var stat = File.ReadAllText($"/proc/{pid}/stat");
        return stat[stat.LastIndexOf(')') + 2];
    }
}
