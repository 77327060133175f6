using HttpPerf.Measurement;
using Bench.Sampling;
using System.Diagnostics;
using System.Globalization;
using System.Text;
using System.Text.Json;
using HttpPerf.ServiceDefaults.Contract;
using LoadGen.Load;
using Bench.LocalSystem;
using static System.FormattableString;

namespace Bench.Benches;

/// <summary>
/// <c>bench --as-run</c>: what the system costs as a user runs it, against what the bench's bare services cost, in one
/// run on one machine (docs/cost.md). Phases, in turn: <c>bare</c>, the services as the bench starts them (one process
/// each, no telemetry exported); <c>process</c>, the README's command, <c>dotnet run -c Release --project AppHost</c>;
/// <c>containers</c>, the same with <c>-- --containers</c>. The AppHost is started by its own command, not by
/// Aspire.Hosting.Testing, because what is measured includes the AppHost's process and the client must not share it.
/// Each path (the product list, the catalog, an upload, a download), every hop forced optimized (<c>X-Perf-Mode</c>):
/// warm-up requests, then requests one at a time, with the machine's CPU (<c>/proc/stat</c>) and every process's
/// (<c>/proc/&lt;pid&gt;/stat</c>, by <see cref="CpuAccount.GroupOf"/>) read around them. Idle: the same readings
/// over a window with no client, right after the system is up and once it has settled (<see cref="SettledAfter"/>).
/// </summary>
public static class AsRunBench
{
    public const string Bare = "bare";
    public const string Process = "process";
    public const string Containers = "containers";

    public static readonly string[] AllPhases = [Bare, Process, Containers];

    /// <summary>The services' own processes: what "the services' CPU" sums.</summary>
    public static readonly string[] ServiceGroups = ["Gateway", "Frontend.Api", "Catalog.Api", "Uploads.Api"];

    private static readonly string[] Paths = ["products", "catalog", "upload", "download"];

    /// <summary>
    /// The product list once more after <see cref="MoreWarmUps"/> more: tiered compilation with dynamic PGO takes hundreds
    /// of requests per replica to settle, and container mode has twice the Frontend replicas to settle.
    /// </summary>
    private const string WarmProducts = "products, warm";

    private const int MoreWarmUps = 200;

    private static readonly string[] Order = [.. Paths, WarmProducts];

    /// <summary>
    /// How long a system is up before its idle is called settled. What runs every 5 s at rest (the Gateway's probes, each
    /// process's metric export) is called 30 times before tiered compilation moves it out of tier 0, and 30 more, with
    /// dynamic PGO's instrumented tier between, before it is compiled for good: about five minutes of a core's few
    /// percent spent by the JIT (docs/cost.md).
    /// </summary>
    public static readonly TimeSpan SettledAfter = TimeSpan.FromMinutes(6);

    private const string FirstMinute = "first minute up";

    private static readonly string Settled = Invariant($"settled: {SettledAfter.TotalMinutes:0} min up, 30 s after the requests");

    /// <summary>Where the AppHost's Gateway answers, the launch profile's address the README names.</summary>

    public sealed record Options(string OutputDirectory, IReadOnlyList<string> Phases, int WarmUps, int Requests, int UploadMiB, TimeSpan Idle, string Configuration,
        double Rate = 4, TimeSpan? Healthy = null, TimeSpan? Freeze = null);

    /// <summary>One path in one phase: the client's view, and CPU milliseconds per request by where they went.</summary>
    public sealed record PathRow(
        string Phase, string Path, long Requests, long Failed, double P50Ms, double P99Ms,
        double MachineMs, double ServicesMs, double InNoProcessMs, IReadOnlyDictionary<string, double> GroupMs);

    /// <summary>A window with no client: percent of one core, by where it went.</summary>
    public sealed record IdleRow(string Phase, string When, double Seconds, double MachinePercent, double InNoProcessPercent, IReadOnlyDictionary<string, double> GroupPercent);

    /// <summary>
    /// Product lists at a steady rate (an open model: latency from each request's intended start): healthy, then with one
    /// Catalog.Api replica frozen (SIGSTOP, as the dashboard's freeze command), then thawed. <paramref name="OverBound"/>
    /// counts requests sent during the freeze slower than the healthy p99 + 1 s.
    /// </summary>
    public sealed record RateRow(
        string Phase, double PerSecond, long HealthyRequests, long HealthyFailed, double HealthyP50Ms, double HealthyP99Ms,
        double FreezeSeconds, long FrozenRequests, long FrozenFailed, double FrozenSlowestMs, long OverBound);

    public sealed record Result(IReadOnlyList<PathRow> Paths, IReadOnlyList<IdleRow> Idle, IReadOnlyList<RateRow> Rates, IReadOnlyList<string> Notes);

    public static async Task<Result> RunAsync(Options options, Action<string> progress, CancellationToken cancellationToken)
    {
        var paths = new List<PathRow>();
        var idle = new List<IdleRow>();
        var rates = new List<RateRow>();
        var notes = new List<string>();
        foreach (var phase in AllPhases.Where(options.Phases.Contains))
        {
            progress($"{phase}: starting");
            try
            {
                await using var system = await StartAsync(phase, options, cancellationToken);
                var up = Stopwatch.StartNew();
                progress($"{phase}: up at {system.Gateway}");
                using var client = new HttpClient { BaseAddress = system.Gateway, Timeout = TimeSpan.FromMinutes(5) };
                idle.Add(await IdleAsync(phase, FirstMinute, options.Idle, progress, cancellationToken));

                var uploadBytes = options.UploadMiB * 1_048_576L;
                var download = await SyntheticFileContent.StoreAsync(client, uploadBytes, cancellationToken);
                foreach (var path in Paths)
                {
                    paths.Add(await MeasureAsync(phase, path, client, () => Request(path, uploadBytes, download), options.WarmUps, options, progress, cancellationToken));
                }

                paths.Add(await MeasureAsync(phase, WarmProducts, client, () => Request("products", uploadBytes, download), MoreWarmUps, options, progress, cancellationToken));

                using (var delete = await client.DeleteAsync($"/api/uploads/{download}", cancellationToken))
                {
                    delete.EnsureSuccessStatusCode();
                }

                if (phase != Bare)
                {
                    rates.Add(await RateAsync(phase, client, options, progress, cancellationToken));
                }

                // Settled: what the requests left behind (a GC, the page cache's writeback of the uploads) is over, and
                // so is the JIT's work on what runs at rest.
                var wait = TimeSpan.FromSeconds(Math.Max(30, (SettledAfter - up.Elapsed).TotalSeconds));
                progress(Invariant($"{phase}: at rest {wait.TotalSeconds:0} s before the settled window"));
                await Task.Delay(wait, cancellationToken);
                idle.Add(await IdleAsync(phase, Settled, options.Idle, progress, cancellationToken));
            }
            catch (Exception error) when (error is InvalidOperationException or HttpRequestException or TimeoutException)
            {
                progress($"{phase}: {error.Message}");
                notes.Add($"{phase}: not measured: {error.Message}");
            }
        }

        return new Result(paths, idle, rates, notes);
    }

    /// <summary>Product lists at <see cref="Options.Rate"/> a second: healthy, then one Catalog replica frozen, then thawed.</summary>
    private static async Task<RateRow> RateAsync(string phase, HttpClient client, Options options, Action<string> progress, CancellationToken cancellationToken)
    {
        var healthy = options.Healthy ?? TimeSpan.FromSeconds(30);
        var freeze = options.Freeze ?? TimeSpan.FromSeconds(60);
        var replica = CpuAccount.Processes("Catalog.Api").Max();
        progress(Invariant($"{phase}: product lists at {options.Rate}/s, {healthy.TotalSeconds:0} s healthy, then Catalog.Api {replica} frozen {freeze.TotalSeconds:0} s"));
        var clock = Stopwatch.StartNew();
        var frozenAt = healthy.TotalSeconds;
        var thawedAt = frozenAt + freeze.TotalSeconds;
        var fault = Task.Run(async () =>
        {
            await Task.Delay(healthy, cancellationToken);
            await ProcessFaults.FreezeAsync(replica);
            frozenAt = clock.Elapsed.TotalSeconds;
            try
            {
                await Task.Delay(freeze, cancellationToken);
            }
            finally
            {
                await ProcessFaults.ThawAsync(replica);
                thawedAt = clock.Elapsed.TotalSeconds;
            }
        }, cancellationToken);
        var sent = await PaceAsync(client, () => Request("products", 0, ""), options.Rate, healthy + freeze + TimeSpan.FromSeconds(10), clock, cancellationToken);
        await fault;

        // Healthy: the last two thirds before the freeze, past whatever the rate's start stirred up.
        var before = sent.Where(r => r.At >= frozenAt / 3 && r.At < frozenAt).ToList();
        var stats = new ModeStats("healthy");
        foreach (var r in before.Where(r => r.Ok))
        {
            stats.Record(startTimestamp: 0, r.Bytes, ok: true, endTimestamp: (long)(r.Ms / 1000 * Stopwatch.Frequency));
        }

        var p99 = stats.Count > 0 ? stats.PercentileMs(99) : double.NaN;
        var during = sent.Where(r => r.At >= frozenAt && r.At < thawedAt).ToList();
        var row = new RateRow(phase, options.Rate, before.Count, before.Count(r => !r.Ok), stats.Count > 0 ? stats.PercentileMs(50) : double.NaN, p99,
            thawedAt - frozenAt, during.Count, during.Count(r => !r.Ok), during.Count > 0 ? during.Max(r => r.Ms) : 0, during.Count(r => !r.Ok || r.Ms > p99 + 1000));
        progress(Invariant($"{phase}: healthy p50 {row.HealthyP50Ms:0} ms, p99 {row.HealthyP99Ms:0} ms, {row.HealthyFailed} of {row.HealthyRequests} failed; frozen: {row.FrozenRequests} sent, {row.FrozenFailed} failed, slowest {row.FrozenSlowestMs:0} ms, {row.OverBound} over healthy p99 + 1 s"));
        return row;
    }

    /// <summary>Requests at <paramref name="perSecond"/>, each timed from its intended start, whatever is still in flight.</summary>
    private static async Task<List<(double At, double Ms, bool Ok, long Bytes)>> PaceAsync(
        HttpClient client, Func<HttpRequestMessage> request, double perSecond, TimeSpan duration, Stopwatch clock, CancellationToken cancellationToken)
    {
        var sent = new List<(double At, double Ms, bool Ok, long Bytes)>();
        var inFlight = new List<Task>();
        var start = clock.Elapsed.TotalSeconds;
        for (var i = 0; start + i / perSecond < start + duration.TotalSeconds; i++)
        {
            var due = start + i / perSecond;
            if (due - clock.Elapsed.TotalSeconds is > 0 and var wait)
            {
                await Task.Delay(TimeSpan.FromSeconds(wait), cancellationToken);
            }

            inFlight.Add(Task.Run(async () =>
            {
                var outcome = await Exchange.SendAsync(client, request(), new byte[64 * 1024], cancellationToken);
                lock (sent)
                {
                    sent.Add((due, (clock.Elapsed.TotalSeconds - due) * 1000, outcome.Ok, outcome.Bytes));
                }
            }, cancellationToken));
        }

        await Task.WhenAll(inFlight);
        return sent;
    }

    private static HttpRequestMessage Request(string path, long uploadBytes, string download)
    {
        var request = path switch
        {
            "products" => new HttpRequestMessage(HttpMethod.Get, "/api/products"),
            "catalog" => new HttpRequestMessage(HttpMethod.Get, "/api/catalog/products"),
            "upload" => new HttpRequestMessage(HttpMethod.Post, "/api/uploads") { Content = SyntheticFileContent.Create(uploadBytes) }.DeletesWhatItCreates("/api", "/api/uploads/{id}"),
            "download" => new HttpRequestMessage(HttpMethod.Get, $"/api/uploads/{download}"),
            _ => throw new ArgumentOutOfRangeException(nameof(path), path, null),
        };
        request.Headers.Add(PerfMode.RequestHeader, PerfMode.Optimized);
        return request;
    }

    /// <summary>Warm-up requests, then requests one at a time with the CPU read around them.</summary>
    private static async Task<PathRow> MeasureAsync(
        string phase, string path, HttpClient client, Func<HttpRequestMessage> request, int warmUps, Options options, Action<string> progress, CancellationToken cancellationToken)
    {
        await LoadRunner.RunAsync(client, _ => ("warm-up", request()), warmUps, concurrency: 1, cancellationToken);
        var before = CpuAccount.Take();
        var stats = (await LoadRunner.RunAsync(client, _ => (path, request()), options.Requests, concurrency: 1, cancellationToken, keysInOrder: [path]))[0];
        var spent = CpuAccount.Take().Since(before);
        double PerRequest(double seconds) => seconds * 1000 / Math.Max(1, stats.Count);
        var row = new PathRow(
            phase, path, stats.Count, stats.Errors, stats.PercentileMs(50), stats.PercentileMs(99),
            PerRequest(spent.MachineLess(CpuAccount.Client)),
            PerRequest(ServiceGroups.Sum(spent.Of)),
            PerRequest(spent.InNoProcess),
            spent.Groups.Where(g => g.Key != CpuAccount.Client && g.Value.Seconds > 0).ToDictionary(g => g.Key, g => PerRequest(g.Value.Seconds)));
        progress(Invariant($"{phase}, {path}: {row.Requests} requests, {row.Failed} failed, p50 {row.P50Ms:0} ms; CPU ms per request: machine {row.MachineMs:0.0}, services {row.ServicesMs:0.0}, in no process {row.InNoProcessMs:0.0}"));
        return row;
    }

    private static async Task<IdleRow> IdleAsync(string phase, string when, TimeSpan window, Action<string> progress, CancellationToken cancellationToken)
    {
        var before = CpuAccount.Take();
        await Task.Delay(window, cancellationToken);
        var spent = CpuAccount.Take().Since(before);
        double Percent(double seconds) => seconds / spent.Wall * 100;
        var row = new IdleRow(phase, when, spent.Wall, Percent(spent.MachineLess(CpuAccount.Client)), Percent(spent.InNoProcess),
            spent.Groups.Where(g => g.Key != CpuAccount.Client && g.Value.Seconds > 0).ToDictionary(g => g.Key, g => Percent(g.Value.Seconds)));
        progress(Invariant($"{phase}, idle ({when}): machine {row.MachinePercent:0.0}% of a core, in no process {row.InNoProcessPercent:0.0}%"));
        return row;
    }

    /// <summary>A running system to measure: its Gateway's address, and what stops it.</summary>
    private sealed class RunningSystem(Uri gateway, Func<ValueTask> stop) : IAsyncDisposable
    {
        public Uri Gateway { get; } = gateway;

        public ValueTask DisposeAsync() => stop();
    }

    private static async Task<RunningSystem> StartAsync(string phase, Options options, CancellationToken cancellationToken)
    {
        if (phase == Bare)
        {
            var local = await LocalSystem.LocalSystem.StartAsync(new LocalSystemOptions { Configuration = options.Configuration }, cancellationToken);
            return new RunningSystem(local.Gateway.BaseAddress, local.DisposeAsync);
        }

        if (phase == Containers)
        {
            var system = await ContainerModeSystem.StartAsync(options.Configuration, [], cancellationToken);
            return new RunningSystem(AppHostProcess.Gateway, system.DisposeAsync);
        }

        var apphost = await AppHostProcess.StartAsync(containers: false, options.Configuration, [], cancellationToken);
        return new RunningSystem(AppHostProcess.Gateway, apphost.DisposeAsync);
    }

    /// <summary>report.md: how each phase was measured, by <paramref name="command"/>, then its tables.</summary>
    public static string Markdown(Options options, Result result, string command)
    {
        var report = MadeBy.Heading("What the system costs as it is run, against the bench's bare services", command, MachineInfo.Now(options.Configuration), "one run on one machine")
            .AppendLine("Phases: `bare`, the services as `bench` starts them (one process each, no telemetry exported); `process`, the")
            .AppendLine("README's `dotnet run -c Release --project AppHost`; `containers`, the same with `-- --containers`. Every request")
            .AppendLine(Invariant($"forced optimized at every hop (`X-Perf-Mode`); per path {options.WarmUps} warm-ups, then {options.Requests} requests one at a time"))
            .AppendLine(Invariant($"(`{WarmProducts}`: the product list again after {MoreWarmUps} more, once tiered compilation has settled);"))
            .AppendLine(Invariant($"uploads and downloads of {options.UploadMiB} MiB (each upload deleted once answered, inside the window). CPU per request:"))
            .AppendLine("`machine` is `/proc/stat`'s busy time less the client's own process; `services` the four services' processes")
            .AppendLine("(`/proc/<pid>/stat`); `in no process` the machine's less every living process's: the kernel's own work and")
            .AppendLine("processes that ended in the window. `÷ bare` divides the machine's CPU per request by the bare services' own, the")
            .AppendLine("figure the bench reports.")
            .AppendLine()
            .Append(Table(result.Paths))
            .AppendLine()
            .AppendLine("## Where it went, CPU ms per request")
            .AppendLine()
            .AppendLine("A column sums a group's processes: under the AppHost two Catalog.Api replicas, in containers two of each service")
            .AppendLine("but the Gateway. `other` is every process of the machine that is no part of the system.")
            .AppendLine()
            .Append(GroupTable(result.Paths.Select(r => ($"{r.Path}, {r.Phase}", r.GroupMs)).ToList(), "0.0"))
            .AppendLine()
            .AppendLine(Invariant($"## Idle: no client, {options.Idle.TotalSeconds:0} s, percent of one core"))
            .AppendLine()
            .Append(IdleTable(result.Idle))
            .AppendLine()
            .Append(GroupTable(result.Idle.Select(r => ($"{r.Phase}, {r.When}", r.GroupPercent)).ToList(), "0.00"));
        if (result.Rates.Count > 0)
        {
            report.AppendLine()
                .AppendLine(Invariant($"## Product lists at {options.Rate} a second, then one Catalog replica frozen"))
                .AppendLine()
                .AppendLine("An open model (each request timed from its intended start, whatever is still in flight). Healthy: the last two")
                .AppendLine("thirds of the time before the freeze. Frozen: a Catalog.Api process stopped (SIGSTOP, as the dashboard's freeze")
                .AppendLine("command), every request sent until it is thawed; `over the bound` counts those failed or slower than the healthy p99 + 1 s.")
                .AppendLine()
                .Append(RateTable(result.Rates));
        }

        foreach (var note in result.Notes)
        {
            report.AppendLine().AppendLine(note);
        }

        return report.ToString();
    }

    /// <summary>What docs/cost.md quotes: CPU per request, at rest, and at a steady rate with a replica frozen.</summary>
    public static string Tables(Result result) =>
        Table(result.Paths) + "\nAt rest, percent of one core (the processes by group in the report):\n\n" + IdleTable(result.Idle)
        + (result.Rates.Count > 0 ? "\nProduct lists at a steady rate, then one Catalog replica frozen:\n\n" + RateTable(result.Rates) : "");

    /// <summary>Each path in each phase: the client's p50, the machine's and the services' CPU per request, and the ratios.</summary>
    public static string Table(IReadOnlyList<PathRow> rows)
    {
        var measured = rows.OrderBy(r => Array.IndexOf(Order, r.Path)).ThenBy(r => Array.IndexOf(AllPhases, r.Phase)).Select(row =>
            Invariant($"| {row.Path} | {row.Phase} | {row.Requests:N0} | {row.Failed:N0} | {row.P50Ms:0} | {row.P99Ms:0} | {row.MachineMs:0.0} | {row.ServicesMs:0.0} | {row.InNoProcessMs:0.0} | {Figures.Ratio(row.MachineMs, rows.FirstOrDefault(r => r.Path == row.Path && r.Phase == Bare)?.ServicesMs)} |"));
        var ratios = new[] { "products", WarmProducts }
            .Select(path => rows.Where(r => r.Path == path).ToDictionary(r => r.Phase))
            .Where(phases => phases.ContainsKey(Process) && phases.ContainsKey(Containers))
            .Select(phases => (Process: phases[Process], Containers: phases[Containers]))
            .Select(p => $"| {p.Process.Path} | containers ÷ process | | | {Figures.Ratio(p.Containers.P50Ms, p.Process.P50Ms)} | | {Figures.Ratio(p.Containers.MachineMs, p.Process.MachineMs)} | {Figures.Ratio(p.Containers.ServicesMs, p.Process.ServicesMs)} | | |");
        return MarkdownTable.Of(
            "| path | phase | requests | failed | p50 ms | p99 ms | machine CPU ms/request | services' CPU ms/request | in no process | machine ÷ bare services' |",
            "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
            measured.Concat(ratios));
    }

    public static string RateTable(IReadOnlyList<RateRow> rows) => MarkdownTable.Of(
        "| phase | per second | healthy requests | failed | p50 ms | p99 ms | frozen for | sent frozen | failed | slowest ms | over the bound |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        rows.Select(row => Invariant($"| {row.Phase} | {row.PerSecond:0.#} | {row.HealthyRequests:N0} | {row.HealthyFailed:N0} | {row.HealthyP50Ms:0} | {row.HealthyP99Ms:0} | {row.FreezeSeconds:0} s | {row.FrozenRequests:N0} | {row.FrozenFailed:N0} | {row.FrozenSlowestMs:0} | {row.OverBound:N0} |")));

    public static string IdleTable(IReadOnlyList<IdleRow> rows) => MarkdownTable.Of(
        "| phase | when | machine, % of a core | the system's | services' | in no process |",
        "|---|---|---:|---:|---:|---:|",
        rows.Select(row => Invariant($"| {row.Phase} | {row.When} | {row.MachinePercent:0.0} | {SystemPercent(row):0.0} | {ServicesPercent(row):0.0} | {row.InNoProcessPercent:0.0} |")));

    private static double ServicesPercent(IdleRow row) => row.GroupPercent.Where(g => ServiceGroups.Any(s => g.Key.StartsWith(s, StringComparison.Ordinal))).Sum(g => g.Value);

    /// <summary>
    /// What the system itself spends at rest: its processes (the services, Aspire's, and in container mode the engine's
    /// and Redis), and what is in no process when it is more than nothing: at rest that is mostly processes the system
    /// starts and ends (DCP runs the container engine's command line). Not the machine's other processes, nor its kernel
    /// threads.
    /// </summary>
    public static double SystemPercent(IdleRow row) =>
        row.GroupPercent.Where(g => g.Key is not (CpuAccount.Other or CpuAccount.KernelThreads or CpuAccount.Client)
                && (row.Phase == Containers || g.Key is not (CpuAccount.ContainerEngine or CpuAccount.Redis)))
            .Sum(g => g.Value) + Math.Max(0, row.InNoProcessPercent);

    /// <summary>One row per (label), one column per group of processes, largest first.</summary>
    private static string GroupTable(IReadOnlyList<(string Label, IReadOnlyDictionary<string, double> Groups)> rows, string format)
    {
        var groups = rows.SelectMany(r => r.Groups).GroupBy(g => g.Key).OrderByDescending(g => g.Max(x => x.Value)).Select(g => g.Key).ToList();
        return MarkdownTable.Of(
            $"| |{string.Concat(groups.Select(g => $" {g} |"))}",
            $"|---|{string.Concat(groups.Select(_ => "---:|"))}",
            rows.Select(r => $"| {r.Label} |{string.Concat(groups.Select(g => r.Groups.TryGetValue(g, out var v) ? $" {v.ToString(format, CultureInfo.InvariantCulture)} |" : " |"))}"));
    }
}
