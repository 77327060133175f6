using System.Diagnostics;
using System.Globalization;
using System.Net.Http.Json;
using System.Text;
using System.Text.Json;
using Bench.Sampling;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.ServiceDefaults.Telemetry;
using static System.FormattableString;

namespace Bench.Benches;

/// <summary>
/// <c>bench --memory --gc</c>: the GC these services run under a memory limit, measured rather than assumed. The
/// AppHost in container mode, once per GC setting (given to every service's containers as a deployment would,
/// <c>Containers:Environment</c>): .NET 10's default for ASP.NET Core, Server GC with its dynamic heap count (DATAS);
/// Workstation GC; Server GC without DATAS. For each, every flag optimized: the services at rest (working set, cgroup
/// memory and CPU over a window with no request), then the product list at 16 in flight (p50, p99, every service's CPU
/// per list, each replica's cgroup peak), then the catalog the same way.
/// </summary>
public static class GcBench
{
    /// <summary>Its report, beside the memory report.</summary>
    public const string Report = "gc";

    /// <summary>The settings compared: a name, and the variables every service's containers get.</summary>
    public static readonly IReadOnlyList<(string Name, string[] Environment)> Settings =
    [
        ("Server GC, DATAS (.NET 10's default)", []),
        ("Workstation GC", ["DOTNET_gcServer=0"]),
        ("Server GC without DATAS", ["DOTNET_GCDynamicAdaptationMode=0"]),
    ];

    private static readonly string[] Services = [SystemContract.Gateway, SystemContract.Frontend, SystemContract.Catalog, SystemContract.Uploads];

    public sealed record Row(string Gc, double IdleWorkingSetMiB, double IdleCgroupMiB, double IdleCpuPercent, string Path, int Requests, int Failed,
        double P50Ms, double P99Ms, double CpuMsPerRequest, double PeakMiB, double LimitMiB);

    public static async Task<IReadOnlyList<Row>> RunAsync(MemoryBench.Options options, TimeSpan idle, Action<string> progress, CancellationToken cancellationToken)
    {
        var rows = new List<Row>();
        foreach (var (gc, environment) in Settings)
        {
            progress($"{gc}: starting the AppHost in container mode");
            await using var system = await ContainerModeSystem.StartAsync(options.Configuration, environment.Select(e => $"--Containers:Environment:{e}"), cancellationToken);
            var (gateway, engine, names) = (system.Gateway, system.Engine, system.Containers);
            var replicas = new List<(string Service, string Container, int Port)>();
            foreach (var service in Services)
            {
                foreach (var container in names[service])
                {
                    replicas.Add((service, container, await engine.HostPortAsync(container, 8080, cancellationToken)));
                }
            }

            using var control = new HttpClient { Timeout = TimeSpan.FromSeconds(5) };
            async Task<IReadOnlyList<RuntimeCounters>> ReadAsync() =>
                await Task.WhenAll(replicas.Select(r => control.GetFromJsonAsync<RuntimeCounters>(Invariant($"http://127.0.0.1:{r.Port}{SystemContract.RuntimePath}"), cancellationToken)!))
                    .ContinueWith(t => (IReadOnlyList<RuntimeCounters>)[.. t.Result.Select(c => c!)], cancellationToken, TaskContinuationOptions.OnlyOnRanToCompletion, TaskScheduler.Default);

            // Warm: the first lists compile the services' code; the bench's figures are of warm services.
            for (var i = 0; i < 6; i++)
            {
                await AppHostProcess.AnswersAsync(gateway, "/api/products", cancellationToken);
                await AppHostProcess.AnswersAsync(gateway, "/api/catalog/products", cancellationToken);
            }

            progress($"{gc}: {idle.TotalSeconds:0} s at rest");
            var restStart = await ReadAsync();
            var clock = Stopwatch.StartNew();
            await Task.Delay(idle, cancellationToken);
            var restEnd = await ReadAsync();
            var idleCpu = restEnd.Zip(restStart, (a, b) => a.CpuSeconds - b.CpuSeconds).Sum() / clock.Elapsed.TotalSeconds * 100;
            var idleWorkingSet = restEnd.Sum(c => c.WorkingSetBytes) / 1048576.0;
            var idleCgroup = restEnd.Sum(c => c.MemoryUsageBytes ?? 0) / 1048576.0;

            foreach (var (path, name) in new[] { ("/api/products", "products"), ("/api/catalog/products", "catalog") })
            {
                progress($"{gc}: {name}, 16 in flight");
                foreach (var replica in replicas)
                {
                    MemoryCgroup.ResetPeak(MemoryCgroup.Of((await engine.InspectAsync(replica.Container, cancellationToken)).Pid));
                }

                var before = await ReadAsync();
                var latencies = new List<double>();
                var failed = 0;
                await Task.WhenAll(Enumerable.Range(0, 16).Select(async _ =>
                {
                    for (var i = 0; i < options.RequestsPerClient; i++)
                    {
                        var started = Stopwatch.GetTimestamp();
                        var ok = await AppHostProcess.AnswersAsync(gateway, path, cancellationToken);
                        lock (latencies)
                        {
                            latencies.Add(Stopwatch.GetElapsedTime(started).TotalMilliseconds);
                            failed += ok ? 0 : 1;
                        }
                    }
                }));
                var after = await ReadAsync();
                var cpu = after.Zip(before, (a, b) => a.CpuSeconds - b.CpuSeconds).Sum();
                double peak = 0, limit = 0;
                foreach (var replica in replicas)
                {
                    var state = await engine.InspectAsync(replica.Container, cancellationToken);
                    peak = Math.Max(peak, (MemoryCgroup.PeakBytes(MemoryCgroup.Of(state.Pid)) ?? 0) / 1048576.0);
                    limit = Math.Max(limit, state.MemoryLimit / 1048576.0);
                }

                latencies.Sort();
                rows.Add(new Row(gc, idleWorkingSet, idleCgroup, idleCpu, name, latencies.Count, failed,
                    latencies[(int)Math.Ceiling(0.5 * latencies.Count) - 1], latencies[(int)Math.Ceiling(0.99 * latencies.Count) - 1],
                    cpu * 1000 / latencies.Count, peak, limit));
                progress(Invariant($"  p50 {rows[^1].P50Ms:F0} ms, p99 {rows[^1].P99Ms:F0} ms, {rows[^1].CpuMsPerRequest:F0} ms CPU per request, peak {peak:F0} MiB, {failed} failed"));
            }
        }

        return rows;
    }

    /// <summary>gc.md: how the settings were compared, by <paramref name="command"/>, then <see cref="Table"/>.</summary>
    public static string Markdown(MemoryBench.Options options, IReadOnlyList<Row> rows, string command, TimeSpan idle) => MadeBy.Report(
        "The GC under a memory limit", command, MachineInfo.Now(options.Configuration), null,
        Invariant($"Container mode under the default limits, every flag optimized; one AppHost per setting, given to every service's containers. At rest: the services' {Services.Length} kinds, every replica, over {idle.TotalSeconds:0} s with no request (after 6 warm-up lists and catalogs). Under load: 16 clients at once through the Gateway; CPU is every service replica's own, per request; the peak is the highest replica cgroup's."),
        Table(rows));

    public static string Table(IReadOnlyList<Row> rows) => MarkdownTable.Of(
        "| GC | at rest: working set MiB | cgroup MiB | CPU % of a core | path, 16 in flight | p50 ms | p99 ms | CPU ms per request | peak MiB of a replica | failed |",
        "|---|---:|---:|---:|---|---:|---:|---:|---:|---:|",
        rows.Select(row => Invariant($"| {row.Gc} | {row.IdleWorkingSetMiB:F0} | {row.IdleCgroupMiB:F0} | {row.IdleCpuPercent:F1} | {row.Path} | {row.P50Ms:N0} | {row.P99Ms:N0} | {row.CpuMsPerRequest:F0} | {row.PeakMiB:F0} of {row.LimitMiB:F0} | {row.Failed}/{row.Requests} |")));
}
