using System.Collections.Concurrent;
using System.Diagnostics;
using System.Globalization;
using System.Net.Http.Json;
using System.Text;
using Aspire.Hosting;
using Aspire.Hosting.ApplicationModel;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.ServiceDefaults;
using HttpPerf.Tests.Infrastructure;

namespace HttpPerf.Tests.Containers;

/// <summary>
/// Whether the memory limits are honest, when asked (about 17 minutes at the default 180 s a phase):
/// <c>MEMORY_LIMIT_MEASUREMENT=docs/results/memory-limits dotnet test HttpPerf.slnx --filter MemoryLimitMeasurement</c>
/// (<c>MEMORY_LIMIT_SECONDS</c> a phase). Container mode at the default catalog size, every replica under its default
/// limit, LoadGen's default load running. Each flag of the memory table that fails under its limit is set to naive in
/// turn, then all four at once; in each phase 4 clients send the flag's route one after another, and one more sends
/// another route beside them. Written to report.md there: what the naive requests got (200, 503 with Retry-After,
/// anything else), what the request beside them got, and which containers died (ContainerExits' count and last exit).
/// It then holds the limits to docs/memory.md's promise: no container dies, every refusal is a 503 with Retry-After,
/// and every request beside them succeeds; and the A/B command, run once a phase beside the naive load, answers.
/// </summary>
[Collection(Lanes.Orchestrated)]
[Trait(Kind.Name, Kind.Containers)]
public sealed class MemoryLimitMeasurement
{
    private const string Beside = "/api/products/1";

    [Fact]
    public async Task Every_naive_rung_under_its_limit_is_refused_not_killed_and_the_rest_is_served()
    {
        await using var run = OptInRun.AskedBy("MEMORY_LIMIT_MEASUREMENT", "measure the memory limits under naive load (docs/memory.md)");
        var seconds = int.TryParse(Environment.GetEnvironmentVariable("MEMORY_LIMIT_SECONDS"), CultureInfo.InvariantCulture, out var s) ? s : 180;
        var system = await run.StartAsync(new ContainerDashboardScreenshots.DefaultCatalog());
        var start = await system.Commands.ExecuteCommandAsync(SystemContract.LoadGen, KnownResourceCommands.StartCommand, Cancel);
        Assert.True(start.Success, start.Message);
        var download = await LoadGen.Load.SyntheticFileContent.StoreAsync(system.Gateway, 64L << 20, Cancel);
        // LoadGen's control endpoint answers (its /status link is live) before the first A/B is asked of it.
        Assert.True(await Poll.UntilAsync(() => system.App.ResourceNotifications.TryGetCurrentState(SystemContract.LoadGen, out var state)
            && state.Snapshot.Urls.Any(u => u.Url.EndsWith(SystemContract.StatusPath, StringComparison.Ordinal) && !u.IsInactive
                && u.DisplayProperties.DisplayName.StartsWith("LoadGen: ", StringComparison.Ordinal)), TimeSpan.FromSeconds(60)), "LoadGen's /status link never went live");

        // Each flag, the replica whose menu flips it (the flags are shared through Redis), and the route it fails on.
        (string Flag, string Resource, string Route)[] flags =
        [
            (Pitfalls.FrontendCatalogClient, SystemContract.Frontend + "-1", "/api/products"),
            (Pitfalls.CatalogSerialization, SystemContract.Catalog + "-1", "/api/catalog/products"),
            (Pitfalls.GatewayBuffering, SystemContract.Gateway, "/api/catalog/products"),
            (Pitfalls.UploadsDownload, SystemContract.Uploads + "-1", $"/api/uploads/{download}"),
        ];
        // MEMORY_LIMIT_PHASES, comma-separated, keeps only the phases named (a flag, or "all four at once").
        var only = Environment.GetEnvironmentVariable("MEMORY_LIMIT_PHASES")?.Split(',', StringSplitOptions.TrimEntries | StringSplitOptions.RemoveEmptyEntries);
        var phases = flags.Select(f => (Name: f.Flag, Flags: new[] { f })).Append((Name: "all four at once", Flags: flags))
            .Where(p => only is null || only.Contains(p.Name, StringComparer.OrdinalIgnoreCase)).ToList();
        var lastWords = new StringBuilder();
        var refusalsSaid = new StringBuilder();
        var abTables = new StringBuilder();
        var warnings = new StringBuilder();
        var report = new StringBuilder();
        report.AppendLine(CultureInfo.InvariantCulture, $"# Memory limits under naive load\n\nContainer mode, default limits, LoadGen's default load; each phase {seconds} s, 4 clients on the naive route(s), 1 beside on GET {Beside}.\n");
        report.AppendLine("| naive | 200 | 503 with Retry-After | otherwise | beside: ok of sent | containers that died |");
        report.AppendLine("|---|---:|---:|---|---:|---|");
        var failures = new List<string>();
        var memory = new List<(string Phase, Dictionary<string, (long Usage, long Rss, long Cache, long Shmem)> Peaks)>();
        foreach (var (name, set) in phases)
        {
            foreach (var (flag, resource, _) in set)
            {
                await FlipAsync(system, resource, flag, PerfMode.Naive);
            }

            var exitsBefore = Exits(system);
            var phaseStart = DateTime.UtcNow;
            using var sampling = CancellationTokenSource.CreateLinkedTokenSource(Cancel);
            var sampler = SampleAsync(system, sampling.Token);
            var naive = new ConcurrentBag<string>();
            var beside = new ConcurrentBag<string>();
            var clock = Stopwatch.StartNew();
            var duration = TimeSpan.FromSeconds(seconds);
            var refusals = new ConcurrentBag<string>();
            var clients = Enumerable.Range(0, 4).Select(i => LoopAsync(system.Gateway, set[i % set.Length].Route, naive, clock, duration, refusals))
                .Append(LoopAsync(system.Gateway, Beside, beside, clock, duration));
            // The A/B command, once a phase, beside the naive load: it must answer, a row per route, each missing ratio
            // with its reason (LoadGen/Control/AbMeasurement.cs).
            var ab = system.Commands.ExecuteCommandAsync(SystemContract.LoadGen, "measure-ab", Cancel);
            await Task.WhenAll(clients);
            var measured = await ab;
            abTables.AppendLine(CultureInfo.InvariantCulture, $"\n### {name}\n\n{(measured.Success ? measured.Data?.Value : $"failed: {measured.Message}")}");
            if (!measured.Success)
            {
                failures.Add($"{name}: the A/B command failed: {measured.Message}");
            }

            await sampling.CancelAsync();
            memory.Add((name, await sampler));
            var died = Exits(system).Where(e => e.Value.Count > exitsBefore.GetValueOrDefault(e.Key).Count)
                .Select(e => $"{e.Key} ×{e.Value.Count - exitsBefore.GetValueOrDefault(e.Key).Count} ({e.Value.Last})").ToList();

            var otherwise = naive.Where(o => o is not ("200" or "503 Retry-After")).GroupBy(o => o).Select(g => $"{g.Count()} × {g.Key}").ToList();
            var besideOk = beside.Count(o => o == "200");
            report.AppendLine(CultureInfo.InvariantCulture,
                $"| {name} | {naive.Count(o => o == "200")} | {naive.Count(o => o == "503 Retry-After")} | {(otherwise.Count == 0 ? "none" : string.Join(", ", otherwise))} | {besideOk} of {beside.Count} | {(died.Count == 0 ? "none" : string.Join("; ", died))} |");
            failures.AddRange(died.Select(d => $"{name}: {d} died"));
            refusalsSaid.AppendLine(CultureInfo.InvariantCulture, $"- {name}: {(refusals.IsEmpty ? "none" : string.Join("; ", refusals.GroupBy(r => r).Select(g => $"{g.Count()} × \"{g.Key}\"")))}");
            // What each that died last wrote: the engine keeps a container's output across its restarts, so the lines
            // before a restart's first say how the runtime ended (an unhandled exception's type and stack, or nothing
            // before a kernel kill).
            foreach (var container in Exits(system).Where(e => e.Value.Count > exitsBefore.GetValueOrDefault(e.Key).Count).Select(e => e.Key))
            {
                var logs = await system.Engine.TryRunAsync(["logs", "--tail", "400", system.ContainerIds[container]], CancellationToken.None);
                var lines = (logs.Output + logs.Error).Split('\n');
                // A start's first line from the host; the lines before the last one are the previous run's last.
                var starts = lines.Select((line, i) => (line, i)).Where(l => l.line.Contains("Microsoft.Hosting.Lifetime", StringComparison.Ordinal)
                    && lines.ElementAtOrDefault(l.i + 1)?.Contains("Now listening on", StringComparison.Ordinal) == true).Select(l => l.i).ToList();
                var end = starts.Count > 1 ? starts[^1] : lines.Length;
                lastWords.AppendLine(CultureInfo.InvariantCulture, $"\n### {name}: {container}, its last lines before its last start\n\n```");
                foreach (var line in lines.Take(end).TakeLast(40))
                {
                    lastWords.AppendLine(line);
                }

                lastWords.AppendLine("```");
            }

            failures.AddRange(otherwise.Select(o => $"{name}: naive {o}"));
            warnings.AppendLine(CultureInfo.InvariantCulture, $"\n### {name}\n\n{await WarningsSinceAsync(system, phaseStart)}");
            if (besideOk != beside.Count)
            {
                failures.Add($"{name}: beside, {beside.Count - besideOk} of {beside.Count} failed: {string.Join(", ", beside.Where(o => o != "200").Distinct())}");
            }

            foreach (var (flag, resource, _) in set)
            {
                await FlipAsync(system, resource, flag, PerfMode.Optimized);
            }

            await Task.Delay(TimeSpan.FromSeconds(10), Cancel);
        }

        // What each container held at its peak in each phase: the cgroup's count against the limit, and its parts.
        report.AppendLine(CultureInfo.InvariantCulture, $"\nEach container at its highest cgroup count in the phase (MiB; read every 250 ms from its memory cgroup): counted / rss / cache / of which shmem.\n");
        report.AppendLine($"| naive | {string.Join(" | ", ContainerModeFixture.Containers)} |");
        report.AppendLine($"|---|{string.Concat(ContainerModeFixture.Containers.Select(_ => "---|"))}");
        foreach (var (phase, peaks) in memory)
        {
            report.AppendLine($"| {phase} | {string.Join(" | ", ContainerModeFixture.Containers.Select(c => peaks.TryGetValue(c, out var m) ? $"{m.Usage >> 20} / {m.Rss >> 20} / {m.Cache >> 20} / {m.Shmem >> 20}" : "–"))} |");
        }

        report.AppendLine(CultureInfo.InvariantCulture, $"\nAt rest after the phases (10 s after the last), each .NET container's memory beside its GC heap (MiB): the cgroup's anonymous memory (rss) less the heap after its last collection (the runtime's /runtime), and its shmem (the runtime's double-mapped code):\n\n{await AtRestAsync(system)}");
        report.AppendLine(CultureInfo.InvariantCulture, $"\nWhat the 503s said (their problem detail, to its first colon: \"Refused\" is the memory budget's, before the heap filled):\n\n{refusalsSaid}");
        report.AppendLine(CultureInfo.InvariantCulture, $"\n## The A/B command, once a phase\n{abTables}");
        report.AppendLine(CultureInfo.InvariantCulture, $"\n## What the containers logged as warnings and errors, by phase\n{warnings}");
        if (lastWords.Length > 0)
        {
            report.AppendLine(CultureInfo.InvariantCulture, $"\n## What the containers that died last wrote\n{lastWords}");
        }

        File.WriteAllText(Path.Combine(run.Folder, "report.md"), report.ToString());
        TestContext.Current.TestOutputHelper?.WriteLine(report.ToString());
        Assert.True(failures.Count == 0, string.Join(Environment.NewLine, failures));
    }

    private static async Task FlipAsync(ContainerModeFixture system, string resource, string flag, string rung)
    {
        var flip = await system.Commands.ExecuteCommandAsync(resource, $"{flag}-{rung}", Cancel);
        Assert.True(flip.Success, $"{resource} {flag}={rung}: {flip.Message}");
    }

    // One client: the route, one request after another, until the phase ends; each outcome as "200",
    // "503 Retry-After", or what else it was and on which route (a problem's title with it).
    private static Task LoopAsync(HttpClient gateway, string route, ConcurrentBag<string> outcomes, Stopwatch clock, TimeSpan duration, ConcurrentBag<string>? refusals = null) => Task.Run(async () =>
    {
        var buffer = new byte[64 * 1024];
        var on = $"on {(route.StartsWith("/api/uploads/", StringComparison.Ordinal) ? "/api/uploads/{id}" : route)}";
        while (clock.Elapsed < duration)
        {
            try
            {
                using var timeout = CancellationTokenSource.CreateLinkedTokenSource(Cancel);
                timeout.CancelAfter(TimeSpan.FromSeconds(60));
                using var response = await gateway.GetAsync(route, HttpCompletionOption.ResponseHeadersRead, timeout.Token);
                var status = (int)response.StatusCode;
                var problem = response.Content.Headers.ContentType?.MediaType == "application/problem+json"
                    ? await response.Content.ReadFromJsonAsync<Http.ProblemDocument>(timeout.Token)
                    : null;
                if (status == 503)
                {
                    // A refusal's problem detail up to its first colon: the budget's ("Refused") or the heap's own.
                    refusals?.Add(problem?.Detail?.Split(':')[0] ?? "no problem body");
                }
                else if (problem is null)
                {
                    await using var body = await response.Content.ReadAsStreamAsync(timeout.Token);
                    while (await body.ReadAsync(buffer, timeout.Token) > 0)
                    {
                    }
                }

                outcomes.Add((status, response.Headers.RetryAfter) switch
                {
                    (200, _) => "200",
                    (503, not null) => "503 Retry-After",
                    _ => $"{status}{(problem?.Title is { } title ? $" ({title})" : "")} {on}",
                });
                if (status == 503)
                {
                    await Task.Delay(TimeSpan.FromSeconds(1), Cancel);
                }
            }
            catch (Exception exception) when (exception is HttpRequestException or IOException or OperationCanceledException && !Cancel.IsCancellationRequested)
            {
                outcomes.Add(exception is OperationCanceledException ? $"no answer in 60 s {on}" : $"{exception.GetType().Name} ({exception.Message.Split('.')[0]}) {on}");
                await Task.Delay(TimeSpan.FromSeconds(1), Cancel);
            }
        }
    });

    // Each container's warnings and errors since `since` (the console logger's "warn:"/"fail:" line, then its message's
    // first line), digits as N, counted: what a cut relay or a failed call said.
    private static async Task<string> WarningsSinceAsync(ContainerModeFixture system, DateTime since)
    {
        var said = new StringBuilder();
        foreach (var container in ContainerModeFixture.Containers)
        {
            var logs = await system.Engine.TryRunAsync(["logs", "--since", since.ToString("yyyy-MM-ddTHH:mm:ssZ", CultureInfo.InvariantCulture), system.ContainerIds[container]], CancellationToken.None);
            var lines = (logs.Output + "\n" + logs.Error).Split('\n');
            var messages = lines.Select((line, i) => (line, i)).Where(l => l.line.StartsWith("warn:", StringComparison.Ordinal) || l.line.StartsWith("fail:", StringComparison.Ordinal))
                .Select(l => $"{l.line[..4]} {System.Text.RegularExpressions.Regex.Replace(lines.ElementAtOrDefault(l.i + 1)?.Trim() ?? "", "[0-9]+", "N")}")
                .GroupBy(m => m).OrderByDescending(g => g.Count()).Take(6).Select(g => $"  - {g.Count()} × {(g.Key.Length > 220 ? g.Key[..220] + "…" : g.Key)}").ToList();
            if (messages.Count > 0)
            {
                said.AppendLine(CultureInfo.InvariantCulture, $"- {container}:\n{string.Join('\n', messages)}");
            }
        }

        return said.Length == 0 ? "none" : said.ToString();
    }

    private static async Task<string> AtRestAsync(ContainerModeFixture system)
    {
        var table = new StringBuilder("| container | counted | rss | GC heap | rss beside the heap | shmem |\n|---|---:|---:|---:|---:|---:|\n");
        foreach (var container in ContainerModeFixture.Containers.Where(c => c != SystemContract.FlagsConnectionName))
        {
            var pid = (await system.Engine.TryRunAsync(["inspect", "--format", "{{.State.Pid}}", system.ContainerIds[container]], CancellationToken.None)).Output.Trim();
            var cgroup = int.TryParse(pid, CultureInfo.InvariantCulture, out var id) && id > 0 ? Bench.Sampling.MemoryCgroup.Of(id) : null;
            using var replica = system.Replica(container);
            var runtime = await replica.GetFromJsonAsync<HttpPerf.ServiceDefaults.Telemetry.RuntimeCounters>(SystemContract.RuntimePath, Cancel);
            if (Bench.Sampling.MemoryCgroup.Now(cgroup) is { } now && runtime is not null)
            {
                table.AppendLine(CultureInfo.InvariantCulture, $"| {container} | {now.Usage >> 20} | {now.Rss >> 20} | {runtime.GcHeapBytes >> 20} | {(now.Rss - runtime.GcHeapBytes) >> 20} | {now.Shmem >> 20} |");
            }
        }

        return table.ToString();
    }

    // Until cancelled, each container's memory cgroup every 250 ms: its reading at the highest count against the limit.
    private static Task<Dictionary<string, (long Usage, long Rss, long Cache, long Shmem)>> SampleAsync(ContainerModeFixture system, CancellationToken stop) => Task.Run(async () =>
    {
        var peaks = new Dictionary<string, (long Usage, long Rss, long Cache, long Shmem)>();
        var cgroups = new Dictionary<string, string?>();
        while (!stop.IsCancellationRequested)
        {
            foreach (var container in ContainerModeFixture.Containers)
            {
                // Found again after a restart: a new process, maybe a new cgroup.
                if (Bench.Sampling.MemoryCgroup.Now(cgroups.GetValueOrDefault(container)) is not { } now)
                {
                    var pid = (await system.Engine.TryRunAsync(["inspect", "--format", "{{.State.Pid}}", system.ContainerIds[container]], CancellationToken.None)).Output.Trim();
                    cgroups[container] = int.TryParse(pid, CultureInfo.InvariantCulture, out var id) && id > 0 ? Bench.Sampling.MemoryCgroup.Of(id) : null;
                    continue;
                }

                if (now.Usage > peaks.GetValueOrDefault(container).Usage)
                {
                    peaks[container] = now;
                }
            }

            await Task.Delay(250, CancellationToken.None);
        }

        return peaks;
    }, CancellationToken.None);

    // Each container's deaths so far, as ContainerExits publishes them: the count and the last.
    private static Dictionary<string, (int Count, string Last)> Exits(ContainerModeFixture system) =>
        ContainerModeFixture.Containers.ToDictionary(c => c, c => system.App.ResourceNotifications.TryGetCurrentState(c, out var state)
            && state.Snapshot.Properties.FirstOrDefault(p => p.Name == "container.exits")?.Value is { } count
            ? (Convert.ToInt32(count, CultureInfo.InvariantCulture), state.Snapshot.Properties.FirstOrDefault(p => p.Name == "container.last_exit")?.Value?.ToString() ?? "")
            : (0, ""));
}
