using System.Diagnostics;
using System.Globalization;
using System.Net.Http.Json;
using System.Text;
using System.Text.Json;
using Bench.Containers;
using Bench.Sampling;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.ServiceDefaults.Telemetry;
using LoadGen.Load;
using static System.FormattableString;

namespace Bench.Benches;

/// <summary>
/// <c>bench --memory</c>: each lesson with a memory cost, rung by rung, under the memory limits container mode gives
/// every replica (AppHost appsettings.json, <c>Containers:Limits</c>; docs/memory.md). The AppHost is started as the
/// README starts it, with <c>-- --containers</c>; each point sets every flag optimized but the lesson's, sends its
/// request from N clients at once, each one after the other, and records what the lesson's replicas went through:
/// their cgroups' peak (what the kernel counts against the limit, reset before each point), their GC heaps' peak
/// (sampled from <c>/runtime</c>), the requests that failed and how, and the replicas the kernel killed and the engine
/// restarted. A rung that fails at one load is not sent a higher one.
/// </summary>
public static partial class MemoryBench
{
    /// <summary>The lessons whose naive rung costs memory: the flag, the service whose replicas hold it, and the request that shows it.</summary>
    public static readonly IReadOnlyList<Lesson> Lessons =
    [
        new(Pitfalls.FrontendCatalogClient, SystemContract.Frontend, Request.Products),
        new(Pitfalls.CatalogSerialization, SystemContract.Catalog, Request.Catalog),
        new(Pitfalls.GatewayBuffering, SystemContract.Gateway, Request.Catalog),
        new(Pitfalls.UploadsReader, SystemContract.Uploads, Request.Upload),
        new(Pitfalls.UploadsDownload, SystemContract.Uploads, Request.Download),
    ];

    public enum Request { Products, Catalog, Upload, Download }

    public sealed record Lesson(string Flag, string Service, Request Request);

    public sealed record Options(string OutputDirectory, IReadOnlyList<int> InFlight, int RequestsPerClient, int FileMiB, IReadOnlyList<string> Flags, string Configuration);

    /// <summary>One rung at one load: what its requests got, and what the lesson's replicas went through.</summary>
    public sealed record Point(
        string Flag, string Service, string Rung, int InFlight, int Requests, int Succeeded, IReadOnlyDictionary<string, int> Failures,
        double PeakMiB, double LimitMiB, double PeakWorkingSetMiB, double PeakHeapMiB, double HeapLimitMiB, int Restarts, int OomKilled, double Seconds)
    {
        public bool Survived => Succeeded == Requests && Restarts == 0;

        public string HowFailed => string.Join(", ", [
            .. Restarts > 0 ? [Invariant($"{Restarts} replica{(Restarts == 1 ? "" : "s")} killed{(OomKilled > 0 ? " (OOM, 137)" : "")} and restarted")] : Array.Empty<string>(),
            .. Failures.OrderByDescending(f => f.Value).Select(f => Invariant($"{f.Value} × {f.Key}"))]);
    }

    public sealed record Result(string Engine, IReadOnlyDictionary<string, double> LimitsMiB, IReadOnlyList<Point> Points, IReadOnlyList<string> Notes);

    public static async Task<Result> RunAsync(Options options, Action<string> progress, CancellationToken cancellationToken)
    {
        progress("starting the AppHost in container mode (images built first when stale)");
        await using var system = await ContainerModeSystem.StartAsync(options.Configuration, [], cancellationToken);
        var (gateway, engine, names) = (system.Gateway, system.Engine, system.Containers);
        var limits = new Dictionary<string, double>();
        foreach (var (service, containers) in names)
        {
            limits[service] = (await engine.InspectAsync(containers[0], cancellationToken)).MemoryLimit / 1048576.0;
        }

        var notes = new List<string>();
        var points = new List<Point>();
        var fileBytes = (long)options.FileMiB * 1024 * 1024;
        foreach (var lesson in Lessons.Where(l => options.Flags.Count == 0 || options.Flags.Contains(l.Flag, StringComparer.OrdinalIgnoreCase)))
        {
            var pitfall = Pitfalls.Find(lesson.Flag)!;
            string? stored = null;
            if (lesson.Request == Request.Download)
            {
                await system.SetFlagsAsync(lesson.Flag, PerfMode.Optimized, cancellationToken);
                stored = await SyntheticFileContent.StoreAsync(gateway, fileBytes, cancellationToken);
            }

            foreach (var rung in pitfall.Variants.Select(v => v.Name))
            {
                // Fresh replicas for each rung, as the bench's phases have fresh processes: a heap the rung before grew
                // (the GC keeps what it took until it needs to give it back) would be charged to this one.
                await RestartAsync(engine, names[lesson.Service], gateway, cancellationToken);
                await system.SetFlagsAsync(lesson.Flag, rung, cancellationToken);
                foreach (var inFlight in options.InFlight)
                {
                    progress(Invariant($"{lesson.Flag} {rung}, {inFlight} in flight"));
                    var point = await MeasureAsync(engine, gateway, lesson, rung, inFlight, options, names[lesson.Service], stored, notes, cancellationToken);
                    points.Add(point);
                    progress(Invariant($"  {point.Succeeded}/{point.Requests} served, peak {point.PeakMiB:F0} of {point.LimitMiB:F0} MiB, working set {point.PeakWorkingSetMiB:F0} MiB, heap {point.PeakHeapMiB:F0} of {point.HeapLimitMiB:F0} MiB{(point.Survived ? "" : "; " + point.HowFailed)}"));
                    if (!point.Survived)
                    {
                        await RecoverAsync(engine, names.Values.SelectMany(c => c), gateway, cancellationToken);
                        break;
                    }
                }
            }

            if (stored is not null)
            {
                await system.SetFlagsAsync(lesson.Flag, PerfMode.Optimized, cancellationToken);
                using var deleted = await gateway.DeleteAsync($"/api/uploads/{stored}", cancellationToken);
            }
        }

        await system.SetFlagsAsync(flag: null, PerfMode.Optimized, cancellationToken);
        return new Result(engine.Program, limits, points, notes);
    }

    /// <summary>The soak's report, beside the memory report.</summary>
    public const string SoakReport = "soak";

    /// <summary>One service's replicas through the soak: the highest cgroup peak of any, its limit, and the deaths of any.</summary>
    public sealed record SoakRow(string Service, int Replicas, double PeakMiB, double LimitMiB, double PeakHeapMiB, int Restarts);

    public sealed record Soak(double Seconds, double Rate, long Requests, long Failed, double P50Ms, double P99Ms, IReadOnlyList<SoakRow> Services);

    /// <summary>
    /// <c>bench --memory --soak N</c>: LoadGen's default load, as the AppHost's <c>loadgen</c> resource sends it
    /// (AppHost.cs: the mix <see cref="Scenario.DefaultMix"/>, 10 MiB uploads and downloads, 1 a second, 16 in flight at
    /// the most, following the flags), for N seconds through the Gateway with every flag optimized: every replica's
    /// cgroup peak against its limit, its GC heap's, the replicas that died, the requests that failed.
    /// </summary>
    public static async Task<Soak> SoakAsync(Options options, TimeSpan duration, Action<string> progress, CancellationToken cancellationToken)
    {
        progress("starting the AppHost in container mode (images built first when stale)");
        await using var system = await ContainerModeSystem.StartAsync(options.Configuration, [], cancellationToken);
        var (gateway, engine, names) = (system.Gateway, system.Engine, system.Containers);
        var replicas = names.SelectMany(n => n.Value.Select(container => (Service: n.Key, Container: container))).ToList();
        var before = new Dictionary<string, ContainerState>();
        var ports = new Dictionary<string, int>();
        foreach (var (_, container) in replicas)
        {
            before[container] = await engine.InspectAsync(container, cancellationToken);
            MemoryCgroup.ResetPeak(MemoryCgroup.Of(before[container].Pid));
            ports[container] = await engine.HostPortAsync(container, 8080, cancellationToken);
        }

        var samples = new RuntimeSampler(replicas.Select(r => (r.Container, ports[r.Container])), TimeSpan.FromMilliseconds(500));
        var load = Scenario.Parse(Scenario.DefaultMix, [ModeControl.FollowFlags], 10L * 1024 * 1024);
        await using var download = new DownloadFile(gateway, 10L * 1024 * 1024);
        await load.PrepareAsync(download, cancellationToken);
        var runner = new OpenModelRunner(gateway, load.Next, maxInFlight: 16);
        runner.Rate.PerSecond = 1;
        progress(Invariant($"LoadGen's default load for {duration.TotalSeconds:0} s"));
        var stats = (await runner.RunAsync(duration, cancellationToken)).Values.ToList();
        await samples.DisposeAsync();

        var all = new ModeStats("all");
        stats.ForEach(all.Add);
        var rows = new List<SoakRow>();
        foreach (var service in replicas.GroupBy(r => r.Service))
        {
            double peak = 0, limit = 0;
            var restarts = 0;
            foreach (var (_, container) in service)
            {
                var after = await engine.InspectAsync(container, cancellationToken);
                restarts += after.Restarts - before[container].Restarts + (after.Status == "running" ? 0 : 1);
                peak = Math.Max(peak, (MemoryCgroup.PeakBytes(MemoryCgroup.Of(after.Pid)) ?? 0) / 1048576.0);
                limit = after.MemoryLimit / 1048576.0;
            }

            rows.Add(new SoakRow(service.Key, service.Count(), peak, limit, service.Max(r => samples.Peak(r.Container, c => c.GcHeapBytes)) / 1048576.0, restarts));
        }

        return new Soak(duration.TotalSeconds, 1, all.Count, all.Errors, all.PercentileMs(50), all.PercentileMs(99), rows);
    }

    /// <summary>soak.md: what ran, by <paramref name="command"/>, then <see cref="SoakTable"/>.</summary>
    public static string SoakMarkdown(Options options, Soak soak, string command) =>
        MadeBy.Heading("LoadGen's default load under the memory limits", command, MachineInfo.Now(options.Configuration), "container mode, every flag optimized")
            .AppendLine()
            .Append(SoakTable(soak))
            .ToString();

    public static string SoakTable(Soak soak) =>
        Invariant($"{soak.Seconds / 60:0} minutes of LoadGen's default load ({soak.Rate:0} a second, its mix of product lists, catalogs, exports, 10 MiB uploads and downloads): {soak.Requests:N0} requests, {soak.Failed} failed, p50 {soak.P50Ms:N0} ms, p99 {soak.P99Ms:N0} ms.\n\n")
        + MarkdownTable.Of(
            "| service | replicas | peak MiB (highest replica) | limit MiB | of limit | GC heap peak MiB | replicas that died |",
            "|---|---:|---:|---:|---:|---:|---:|",
            soak.Services.Select(row => Invariant($"| {row.Service} | {row.Replicas} | {row.PeakMiB:F0} | {row.LimitMiB:F0} | {row.PeakMiB / row.LimitMiB:P0} | {row.PeakHeapMiB:F0} | {row.Restarts} |")));

    /// <summary>
    /// What a page's marker <c>&lt;!-- memory: name --&gt;</c> quotes of <paramref name="result"/>: with no name, the
    /// lessons in one row each; <c>full</c>, one row per rung; a flag, that lesson's line.
    /// </summary>
    public static string Quote(Result result, string name) => name switch
    {
        "" => Compact(result),
        "full" => Summary(result),
        var flag => Line(result, flag) + "\n",
    };

    // Not root, or cgroup v2: each point's peak is then the highest of the 100 ms samples and the cgroup's mark since
    // the replica's start, which a rung before may have set.
    private const string Unresettable = "Some replicas' cgroup high-water marks could not be reset (the bench needs root and cgroup v1 for that): their peaks are the sampled ones, or since the replica started.";

    private static async Task<Point> MeasureAsync(ContainerEngine engine, HttpClient gateway, Lesson lesson, string rung, int inFlight, Options options,
        IReadOnlyList<string> replicas, string? stored, List<string> notes, CancellationToken cancellationToken)
    {
        var before = new Dictionary<string, ContainerState>();
        var cgroups = new Dictionary<string, string?>();
        var ports = new Dictionary<string, int>();
        foreach (var replica in replicas)
        {
            before[replica] = await engine.InspectAsync(replica, cancellationToken);
            cgroups[replica] = MemoryCgroup.Of(before[replica].Pid);
            if (!MemoryCgroup.ResetPeak(cgroups[replica]) && !notes.Contains(Unresettable))
            {
                notes.Add(Unresettable);
            }
            ports[replica] = await engine.HostPortAsync(replica, 8080, cancellationToken);
        }

        // The GC heaps', the processes' working sets' and the cgroups' high-water marks, sampled every 100 ms while the
        // point runs (a restarted replica starts a new cgroup: what it reached before it died is in the last sample).
        var samples = new RuntimeSampler(replicas.Select(r => (r, ports[r])), TimeSpan.FromMilliseconds(100));
        var clock = Stopwatch.StartNew();
        var failures = new Dictionary<string, int>();
        var succeeded = 0;
        await Task.WhenAll(Enumerable.Range(0, inFlight).Select(async _ =>
        {
            for (var i = 0; i < options.RequestsPerClient; i++)
            {
                var outcome = await SendAsync(gateway, lesson.Request, options.FileMiB, stored, cancellationToken);
                lock (failures)
                {
                    if (outcome is null)
                    {
                        succeeded++;
                    }
                    else
                    {
                        failures[outcome] = failures.GetValueOrDefault(outcome) + 1;
                    }
                }
            }
        }));
        var seconds = clock.Elapsed.TotalSeconds;
        await samples.DisposeAsync();

        long peak = replicas.Max(r => samples.Peak(r, c => c.MemoryUsageBytes ?? 0));
        int restarts = 0, oomKilled = 0;
        foreach (var replica in replicas)
        {
            var after = await engine.InspectAsync(replica, cancellationToken);
            restarts += after.Restarts - before[replica].Restarts + (after.Status == "running" ? 0 : 1);
            oomKilled += after.OomKilled ? 1 : 0;
            if (after.Pid == before[replica].Pid)
            {
                peak = Math.Max(peak, MemoryCgroup.PeakBytes(cgroups[replica]) ?? 0);
            }
        }

        return new Point(lesson.Flag, lesson.Service, rung, inFlight, inFlight * options.RequestsPerClient, succeeded, failures,
            peak / 1048576.0, before[replicas[0]].MemoryLimit / 1048576.0, replicas.Max(r => samples.Peak(r, c => c.WorkingSetBytes)) / 1048576.0,
            replicas.Max(r => samples.Peak(r, c => c.GcHeapBytes)) / 1048576.0, replicas.Max(r => samples.Peak(r, c => c.GcHeapLimitBytes)) / 1048576.0, restarts, oomKilled, seconds);
    }

    /// <summary>Sends one request and reads its body to the end: null when it succeeded whole, else how it failed.</summary>
    private static async Task<string?> SendAsync(HttpClient gateway, Request request, int fileMiB, string? stored, CancellationToken cancellationToken)
    {
        try
        {
            using var message = request switch
            {
                Request.Products => new HttpRequestMessage(HttpMethod.Get, "/api/products"),
                Request.Catalog => new HttpRequestMessage(HttpMethod.Get, "/api/catalog/products"),
                Request.Download => new HttpRequestMessage(HttpMethod.Get, $"/api/uploads/{stored}"),
                _ => new HttpRequestMessage(HttpMethod.Post, "/api/uploads") { Content = SyntheticFileContent.Create((long)fileMiB * 1024 * 1024) },
            };
            using var response = await gateway.SendAsync(message, HttpCompletionOption.ResponseHeadersRead, cancellationToken);
            var body = await response.Content.ReadAsByteArrayAsync(cancellationToken);
            if (response.IsSuccessStatusCode)
            {
                if (request == Request.Upload)
                {
                    // Stored and counted; gone again, so the quota and the disk hold every point.
                    var id = JsonDocument.Parse(body).RootElement[0].GetProperty("id").GetString();
                    using var deleted = await gateway.DeleteAsync($"/api/uploads/{id}", cancellationToken);
                }

                return null;
            }

            var title = response.Content.Headers.ContentType?.MediaType == "application/problem+json" && JsonDocument.Parse(body).RootElement.TryGetProperty("title", out var t)
                ? t.GetString()
                : null;
            return title is null ? Invariant($"{(int)response.StatusCode}") : Invariant($"{(int)response.StatusCode} {title}");
        }
        catch (TaskCanceledException) when (!cancellationToken.IsCancellationRequested)
        {
            return "no answer in 5 min";
        }
        catch (Exception error) when (error is HttpRequestException or IOException)
        {
            return "connection cut";
        }
    }

    /// <summary>Restarts <paramref name="replicas"/> in place (the engine's restart: same container, new process) and waits until the system serves again.</summary>
    private static async Task RestartAsync(ContainerEngine engine, IReadOnlyList<string> replicas, HttpClient gateway, CancellationToken cancellationToken)
    {
        await Task.WhenAll(replicas.Select(replica => engine.RunAsync(["restart", "-t", "2", replica], cancellationToken)));
        await RecoverAsync(engine, replicas, gateway, cancellationToken);
    }

    /// <summary>After a failed point: every container running and healthy again, and the Gateway serving both paths.</summary>
    private static async Task RecoverAsync(ContainerEngine engine, IEnumerable<string> containers, HttpClient gateway, CancellationToken cancellationToken)
    {
        var until = Stopwatch.StartNew();
        foreach (var container in containers)
        {
            while ((await engine.InspectAsync(container, cancellationToken)).Status != "running" && until.Elapsed < TimeSpan.FromMinutes(2))
            {
                await Task.Delay(500, cancellationToken);
            }
        }

        while (!(await AppHostProcess.AnswersAsync(gateway, "/api/products", cancellationToken) && await AppHostProcess.AnswersAsync(gateway, "/api/catalog/products", cancellationToken))
            && until.Elapsed < TimeSpan.FromMinutes(3))
        {
            await Task.Delay(1000, cancellationToken);
        }

        // The Gateway's active health check (every 5 s) and Frontend.Api's choice take a restarted replica back.
        await Task.Delay(TimeSpan.FromSeconds(6), cancellationToken);
    }

    /// <summary>report.md: how the points were measured, by <paramref name="command"/>, then every lesson's.</summary>
    public static string Markdown(Options options, Result result, string command)
    {
        var md = MadeBy.Heading("Memory: each lesson's rungs under a pod's memory limit", command, MachineInfo.Now(options.Configuration), $"containers on {result.Engine}")
            .AppendLine(Invariant($"Container mode under the AppHost's default limits ({string.Join(", ", result.LimitsMiB.Select(l => Invariant($"{l.Key} {l.Value:0} MiB")))}; the GC heap's limit is 50% of it, the AppHost's `Containers:Environment`)."))
            .AppendLine(Invariant($"Each point: every flag optimized but the lesson's; N clients at once, {options.RequestsPerClient} requests each through the Gateway; uploads and downloads of {options.FileMiB} MiB."))
            .AppendLine("The cgroup peak is the lesson's replicas' high-water mark as the kernel counts it against the limit, page cache included (a file written or read fills it to the limit, and is given back when needed: it kills no one); the working set (which also counts the image's files mapped in, charged to whichever replica read them first) and the GC heap (after its last collection) are sampled from `/runtime` every 100 ms. A rung that fails at one load is not sent a higher one.")
            .AppendLine()
            .Append(Summary(result));
        foreach (var lesson in result.Points.GroupBy(p => p.Flag))
        {
            md.AppendLine().AppendLine(Invariant($"## {lesson.Key} (the {lesson.First().Service} replicas)")).AppendLine()
                .Append(MarkdownTable.Of(
                    "| rung | in flight | served | cgroup peak MiB | of limit | working set peak MiB | GC heap peak MiB | of heap limit | seconds | failed how |",
                    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
                    lesson.Select(p => Invariant($"| {p.Rung} | {p.InFlight} | {p.Succeeded}/{p.Requests} | {p.PeakMiB:F0} | {p.PeakMiB / p.LimitMiB:P0} | {p.PeakWorkingSetMiB:F0} | {p.PeakHeapMiB:F0} | {p.PeakHeapMiB / Math.Max(1, p.HeapLimitMiB):P0} | {p.Seconds:F1} | {(p.Survived ? "–" : p.HowFailed)} |"))));
        }

        foreach (var note in result.Notes)
        {
            md.AppendLine().AppendLine(note);
        }

        return md.ToString();
    }

    /// <summary>A lesson's page's line: what each rung survives under the limit, and how the first that fails fails.</summary>
    public static string Line(Result result, string flag)
    {
        var rungs = result.Points.Where(p => p.Flag == flag).GroupBy(p => p.Rung).ToList();
        if (rungs.Count == 0)
        {
            return Invariant($"Not measured under a memory limit yet: `bench --memory --flags {flag}`.");
        }

        var limit = rungs[0].First().LimitMiB;
        var parts = rungs.Select(rung =>
        {
            var failed = rung.FirstOrDefault(p => !p.Survived);
            var survived = rung.Where(p => p.Survived).OrderBy(p => p.InFlight).LastOrDefault();
            var fits = survived is null ? "" : Invariant($"serves {survived.InFlight} in flight (peak {survived.PeakMiB:F0} MiB, GC heap {survived.PeakHeapMiB:F0} MiB)");
            var fails = failed is null ? "" : Invariant($"fails at {failed.InFlight} in flight: {failed.HowFailed}");
            return Invariant($"**{rung.Key}** {string.Join("; ", new[] { fits, fails }.Where(s => s.Length > 0))}");
        });
        return Invariant($"In a {limit:0} MiB pod (container mode's limit per replica, [docs/memory.md](../memory.md)), the {result.Points.First(p => p.Flag == flag).Service} replicas: {string.Join("; ", parts)}.");
    }

    /// <summary>One row per lesson, a cell per rung: the most in flight it served, or the load it failed at and with what.</summary>
    public static string Compact(Result result)
    {
        static string Cell(IReadOnlyList<Point> rung)
        {
            var failed = rung.FirstOrDefault(p => !p.Survived);
            var how = failed is null ? "" : failed.Restarts > 0 ? "killed" : string.Join(", ", failed.Failures.Keys.Select(k => k.Split(' ')[0]).Distinct());
            return rung.Count == 0 ? "–" : failed is null ? Invariant($"serves {rung.Max(p => p.InFlight)}") : Invariant($"**fails at {failed.InFlight}** ({how})");
        }

        return MarkdownTable.Of(
            Invariant($"| in a {result.Points.Select(p => p.LimitMiB).DefaultIfEmpty(0).Max():0} MiB pod | naive | streaming | optimized |"),
            "|---|---|---|---|",
            result.Points.GroupBy(p => p.Flag).Select(lesson =>
                $"| {lesson.Key} | {string.Join(" | ", PerfMode.All.Select(mode => Cell([.. lesson.Where(p => p.Rung == mode)])))} |"));
    }

    /// <summary>One row per lesson and rung: the highest load it survived, and the first it did not, with how.</summary>
    public static string Summary(Result result) => MarkdownTable.Of(
        "| flag | rung | limit | survives | fails at | how |",
        "|---|---|---:|---:|---:|---|",
        result.Points.GroupBy(p => (p.Flag, p.Rung)).Select(rung =>
        {
            var survived = rung.Where(p => p.Survived).Select(p => p.InFlight).DefaultIfEmpty(0).Max();
            var failed = rung.FirstOrDefault(p => !p.Survived);
            return Invariant($"| {rung.Key.Flag} | {rung.Key.Rung} | {rung.First().LimitMiB:0} MiB | {(survived == 0 ? "none" : $"{survived} in flight")} | {(failed is null ? "–" : $"{failed.InFlight} in flight")} | {failed?.HowFailed ?? "–"} |");
        }));
}

/// <summary>
/// Each replica's <c>/runtime</c>, read at <c>interval</c> from its published port until disposed, and the highest of
/// any figure seen: a point's GC heap, working set, or cgroup usage (a replica that is busy, dying or restarting misses
/// a sample).
/// </summary>
internal sealed class RuntimeSampler : IAsyncDisposable
{
    private readonly List<(string Replica, RuntimeCounters Counters)> _samples = [];
    private readonly CancellationTokenSource _stop = new();
    private readonly Task _sampling;

    public RuntimeSampler(IEnumerable<(string Replica, int Port)> replicas, TimeSpan interval)
    {
        var targets = replicas.ToList();
        _sampling = Task.Run(async () =>
        {
            using var client = new HttpClient { Timeout = TimeSpan.FromSeconds(2) };
            while (!_stop.IsCancellationRequested)
            {
                foreach (var (replica, port) in targets)
                {
                    try
                    {
                        var counters = await client.GetFromJsonAsync<RuntimeCounters>(Invariant($"http://127.0.0.1:{port}{SystemContract.RuntimePath}"), _stop.Token);
                        lock (_samples)
                        {
                            _samples.Add((replica, counters!));
                        }
                    }
                    catch (Exception error) when (error is HttpRequestException or TaskCanceledException or JsonException)
                    {
                        // Busy, dying or restarting: the next sample.
                    }
                }

                try
                {
                    await Task.Delay(interval, _stop.Token);
                }
                catch (OperationCanceledException)
                {
                    break;
                }
            }
        });
    }

    /// <summary>The highest <paramref name="figure"/> of <paramref name="replica"/> seen, or 0.</summary>
    public long Peak(string replica, Func<RuntimeCounters, long> figure)
    {
        lock (_samples)
        {
            return _samples.Where(s => s.Replica == replica).Select(s => figure(s.Counters)).DefaultIfEmpty(0).Max();
        }
    }

    public async ValueTask DisposeAsync()
    {
        await _stop.CancelAsync();
        await _sampling;
        _stop.Dispose();
    }
}
