using System.CommandLine;
using Bench.Benches;

namespace Bench.Commands;

/// <summary>
/// <c>bench</c>: the project's one way to measure, reproducible on any machine without Aspire. Starts the
/// services per phase, runs the scenarios chosen (or a sweep of the product list over size or concurrency),
/// writes report.md, report.json and charts (see <see cref="BenchRunner"/>).
/// </summary>
public static class BenchCommand
{
    public static Command Create()
    {
        var output = new Option<string?>("--out") { Description = "Folder for report.md, report.json and the charts (default: docs/results/bench, or docs/results/sweep-<kind>, in the repository)." };
        var scenario = new Option<string>("--scenario")
        {
            Description = $"Scenarios, comma-separated: {string.Join(", ", BenchScenarios.All.Select(s => s.Name))}, or all.",
            DefaultValueFactory = _ => string.Join(",", BenchScenarios.Default),
        };
        var sweep = new Option<string?>("--sweep") { Description = $"Sweep the product list instead: {BenchRunner.SizeSweep} (catalogs of about 0.3, 3, 25 and 100 MB) or {BenchRunner.ConcurrencySweep} (1, 4, 16 and 64 in flight, on a {BenchRunner.ConcurrencySweepProducts:N0}-product catalog unless --products says otherwise)." };
        sweep.AcceptOnlyFromAmong(BenchRunner.SizeSweep, BenchRunner.ConcurrencySweep);
        var faults = new Option<bool>("--faults") { Description = "Measure Frontend.Replicas instead: the product list at 1 and 16 in flight, each rung, healthy, with one of two Catalog replicas frozen, and starved (root); writes docs/results/faults unless --out says otherwise. A 2,000-product catalog unless --products says otherwise." };
        var protocols = new Option<bool>("--protocols") { Description = "Measure Gateway.Upstream instead: products, catalog, upload and download through the Gateway over HTTP/1.1 and HTTP/2 to the services, side by side in one run; writes docs/results/protocols unless --out says otherwise." };
        var grpc = new Option<bool>("--grpc") { Description = "Measure Frontend.Grpc instead: the product list as JSON (each rung) and over gRPC (unary, and the stream at 1, 100, 1,000 and 10,000 products a message), CPU and allocations per hop, p50, p99 and peak working set, side by side in one run; writes docs/results/grpc unless --out says otherwise." };
        var blocking = new Option<bool>("--blocking") { Description = "Measure Frontend.Blocking instead: one product's page at 1, 16, 64 and 256 in flight (--points), each rung for --window seconds: pages a second, p50, p99, the Frontend's threads, its /health and product list beside the load, and the recovery after it; writes docs/results/blocking unless --out says otherwise. A 2,000-product catalog unless --products says otherwise." };
        var asRun = new Option<bool>("--as-run") { Description = "Measure the system as it is run instead: CPU per request of each path and idle CPU, machine-wide, per process and the kernel's share, for the bare services (as bench starts them), the AppHost in process mode and in container mode (--phases), in one run; writes docs/results/as-run unless --out says otherwise." };
        var phases = new Option<string>("--phases")
        {
            Description = $"With --as-run, the phases, comma-separated: {string.Join(", ", AsRunBench.AllPhases)}.",
            DefaultValueFactory = _ => string.Join(",", AsRunBench.AllPhases),
        };
        phases.Validators.Add(result =>
        {
            var unknown = Split(result.GetValueOrDefault<string>() ?? "").Except(AsRunBench.AllPhases).ToList();
            if (unknown.Count > 0)
            {
                result.AddError($"Unknown phase {string.Join(", ", unknown)}: use {string.Join(", ", AsRunBench.AllPhases)}.");
            }
        });
        var memory = new Option<bool>("--memory") { Description = "Measure the lessons with a memory cost instead, rung by rung, in container mode under the AppHost's default memory limits: peak memory and GC heap of the lesson's replicas, requests failed and how, replicas killed, at 1, 2, 4, 8 and 16 in flight (--points), 2 requests per client (--requests), files of 64 MiB (--upload-mb); writes docs/results/memory unless --out says otherwise." };
        var gc = new Option<bool>("--gc") { Description = "With --memory, compare the GC settings instead: Server GC with DATAS (the default), Workstation GC, and Server GC without DATAS, one AppHost in container mode each, at rest (--idle seconds) and with the product list and the catalog at 16 in flight; writes gc.md beside the memory report." };
        var soak = new Option<int?>("--soak") { Description = "With --memory, run LoadGen's default load for this many seconds instead (every flag optimized, under the limits): each service's peak against its limit, replicas that died, requests that failed; writes soak.md beside the memory report." };
        var lessons = new Option<string?>("--flags") { Description = $"With --memory, the lessons, comma-separated: {string.Join(", ", MemoryBench.Lessons.Select(l => l.Flag))} (default: all)." };
        var idle = Positive("--idle", "With --as-run: seconds of each idle window.", 60);
        var rate = Positive("--rate", "With --as-run: product lists a second under the AppHost, healthy and then with one Catalog replica frozen.", 4);
        var freeze = Positive("--freeze", "With --as-run: seconds the Catalog replica stays frozen at --rate.", 60);
        var window = Positive("--window", "With --faults: seconds each row sends product lists for; with --blocking, pages.", 20);
        var updateDocs = new Option<bool>("--update-docs") { Description = "Run nothing: re-render the tables that README.md and docs/ quote from the committed reports under docs/results." };
        var points = new Option<string?>("--points") { Description = "A sweep's points instead of the defaults, comma-separated: product counts (size) or requests in flight (concurrency)." };
        var products = new Option<int?>("--products") { Description = "Catalog size (default: the service default, about 25 MB)." };
        var requests = Positive("--requests", "Requests one at a time per mode (latency); with --protocols, per phase of products and catalog.", 20);
        var concurrency = Positive("--concurrency", "Fetches in flight for memory and throughput.", 16);
        var concurrentRequests = Positive("--concurrent-requests", "Requests per mode at --concurrency.", 32);
        var uploadMb = Positive("--upload-mb", "Upload and download size in MiB.", 100);
        var uploads = Positive("--uploads", "Uploads and downloads per mode; with --protocols, per phase.", 5);
        var warmUp = new Option<int>("--warmup") { Description = "Seconds of warm-up requests before each phase is measured (at least two requests; then on while the services still compile, up to three times as long).", DefaultValueFactory = _ => (int)BenchOptions.DefaultWarmUp.TotalSeconds };
        warmUp.Validators.Add(result =>
        {
            if (result.GetValueOrDefault<int>() < 0)
            {
                result.AddError("--warmup must be 0 or more.");
            }
        });
        products.Validators.Add(result =>
        {
            if (result.GetValueOrDefault<int?>() is < 1)
            {
                result.AddError("--products must be at least 1.");
            }
        });

        var command = new Command("bench", "Start the services per mode (naive, optimized, baseline), run every scenario, write the report.")
        {
            output, scenario, sweep, faults, protocols, grpc, blocking, asRun, memory, gc, soak, lessons, phases, idle, rate, freeze, window, points, updateDocs, products, requests, concurrency, concurrentRequests, uploadMb, uploads, warmUp,
        };
        command.Validators.Add(result =>
        {
            try
            {
                BenchScenarios.Select(Split(result.GetValue(scenario) ?? string.Join(",", BenchScenarios.Default)));
                _ = ParsePoints(result.GetValue(points));
            }
            catch (Exception error) when (error is ArgumentException or FormatException or OverflowException)
            {
                result.AddError(error.Message);
            }
        });
        command.SetAction(async (parse, cancellationToken) =>
        {
            if (parse.GetValue(updateDocs))
            {
                return await UpdateDocsAsync(cancellationToken);
            }

            if (parse.GetValue(faults))
            {
                return await RunFaultsAsync(parse, output, products, window, cancellationToken);
            }

            if (parse.GetValue(asRun))
            {
                return await RunAsRunAsync(parse, output, phases, requests, uploadMb, idle, rate, freeze, cancellationToken);
            }

            if (parse.GetValue(memory))
            {
                return await RunMemoryAsync(parse, output, points, requests, uploadMb, lessons, gc, soak, idle, cancellationToken);
            }

            if (parse.GetValue(grpc))
            {
                return await RunGrpcAsync(parse, output, products, requests, warmUp, cancellationToken);
            }

            if (parse.GetValue(blocking))
            {
                return await RunBlockingAsync(parse, output, products, points, window, cancellationToken);
            }

            if (parse.GetValue(protocols))
            {
                return await RunProtocolsAsync(parse, output, products, requests, uploads, uploadMb, warmUp, cancellationToken);
            }

            var sweepKind = parse.GetValue(sweep);
            var options = new BenchOptions
            {
                OutputDirectory = Folder(parse, output, sweepKind is null ? ResultsFolders.Main : $"sweep-{sweepKind}"),
                Scenarios = Split(parse.GetValue(scenario)!),
                Sweep = sweepKind,
                Points = ParsePoints(parse.GetValue(points)),
                ProductCount = parse.GetValue(products),
                Requests = parse.GetValue(requests),
                Concurrency = parse.GetValue(concurrency),
                ConcurrentRequests = parse.GetValue(concurrentRequests),
                UploadMiB = parse.GetValue(uploadMb),
                UploadRequests = parse.GetValue(uploads),
                WarmUp = TimeSpan.FromSeconds(parse.GetValue(warmUp)),
            };
            var result = await BenchRunner.RunAsync(options, Progress, cancellationToken);
            var folder = Directory.CreateDirectory(options.OutputDirectory).FullName;
            return await PublishAsync(folder, ReportFiles.Report, result, BenchReport.Render(result, CommandLine(parse), folder), result.Phases.Any(p => p.Errors > 0), cancellationToken);
        });
        return command;
    }

    /// <summary><c>bench --faults</c>: <see cref="FaultBench"/>, its report written and printed.</summary>
    private static async Task<int> RunFaultsAsync(ParseResult parse, Option<string?> output, Option<int?> products, Option<int> window, CancellationToken cancellationToken)
    {
        var options = new FaultBench.Options(
            Folder(parse, output, ResultsFolders.Faults),
            parse.GetValue(products) ?? 2_000,
            TimeSpan.FromSeconds(parse.GetValue(window)),
            LocalSystem.LocalSystem.CurrentConfiguration);
        var rows = await FaultBench.RunAsync(options, Progress, cancellationToken);
        // The starved rows are root's alone (a cgroup's CPU quota): a report that has them was made with sudo.
        var command = CommandLine(parse, asRoot: rows.Any(r => r.Condition == FaultBench.Starved));
        // The requests a frozen replica fails under naive are the finding, not a failed run.
        return await PublishAsync(options.OutputDirectory, ReportFiles.Report, rows, FaultBench.Markdown(options, rows, command), failed: false, cancellationToken);
    }

    /// <summary>
    /// <c>bench --as-run</c>: <see cref="AsRunBench"/>, its report written and printed. 30 warm-ups and 40 requests per path
    /// (<c>--requests</c> changes the second), uploads of 10 MiB (<c>--upload-mb</c>), as LoadGen's default load sends.
    /// </summary>
    private static async Task<int> RunAsRunAsync(
        ParseResult parse, Option<string?> output, Option<string> phases, Option<int> requests, Option<int> uploadMb, Option<int> idle, Option<int> rate, Option<int> freeze,
        CancellationToken cancellationToken)
    {
        var options = new AsRunBench.Options(
            Folder(parse, output, ResultsFolders.AsRun),
            Split(parse.GetValue(phases)!),
            WarmUps: 30,
            Requests: parse.GetResult(requests) is { Implicit: false } ? parse.GetValue(requests) : 40,
            UploadMiB: parse.GetResult(uploadMb) is { Implicit: false } ? parse.GetValue(uploadMb) : 10,
            Idle: TimeSpan.FromSeconds(parse.GetValue(idle)),
            LocalSystem.LocalSystem.CurrentConfiguration,
            Rate: parse.GetValue(rate),
            Freeze: TimeSpan.FromSeconds(parse.GetValue(freeze)));
        var result = await AsRunBench.RunAsync(options, Progress, cancellationToken);
        return await PublishAsync(options.OutputDirectory, ReportFiles.Report, result, AsRunBench.Markdown(options, result, CommandLine(parse)),
            result.Notes.Count > 0 || result.Paths.Any(r => r.Failed > 0) || result.Rates.Any(r => r.HealthyFailed > 0 || r.OverBound > 0), cancellationToken);
    }

    /// <summary><c>bench --memory</c>: <see cref="MemoryBench"/> (or its soak, or <see cref="GcBench"/>), its report written and printed.</summary>
    private static async Task<int> RunMemoryAsync(
        ParseResult parse, Option<string?> output, Option<string?> points, Option<int> requests, Option<int> uploadMb, Option<string?> lessons, Option<bool> gc, Option<int?> soak,
        Option<int> idle, CancellationToken cancellationToken)
    {
        var options = new MemoryBench.Options(
            Folder(parse, output, ResultsFolders.Memory),
            ParsePoints(parse.GetValue(points)) ?? [1, 2, 4, 8, 16],
            RequestsPerClient: parse.GetResult(requests) is { Implicit: false } ? parse.GetValue(requests) : 2,
            FileMiB: parse.GetResult(uploadMb) is { Implicit: false } ? parse.GetValue(uploadMb) : 64,
            Flags: Split(parse.GetValue(lessons) ?? ""),
            LocalSystem.LocalSystem.CurrentConfiguration);
        var command = CommandLine(parse);
        if (parse.GetValue(soak) is { } seconds)
        {
            var soaked = await MemoryBench.SoakAsync(options, TimeSpan.FromSeconds(seconds), Progress, cancellationToken);
            return await PublishAsync(options.OutputDirectory, MemoryBench.SoakReport, soaked, MemoryBench.SoakMarkdown(options, soaked, command),
                soaked.Failed > 0 || soaked.Services.Any(s => s.Restarts > 0), cancellationToken);
        }

        if (parse.GetValue(gc))
        {
            var window = TimeSpan.FromSeconds(parse.GetValue(idle));
            var rows = await GcBench.RunAsync(options, window, Progress, cancellationToken);
            return await PublishAsync(options.OutputDirectory, GcBench.Report, rows, GcBench.Markdown(options, rows, command, window), rows.Any(r => r.Failed > 0), cancellationToken);
        }

        var result = await MemoryBench.RunAsync(options, Progress, cancellationToken);
        // A rung that fails under the limit is a finding, not a failed run.
        return await PublishAsync(options.OutputDirectory, ReportFiles.Report, result, MemoryBench.Markdown(options, result, command), failed: false, cancellationToken);
    }

    /// <summary><c>bench --grpc</c>: <see cref="GrpcBench"/>, its report written and printed.</summary>
    /// <summary><c>bench --blocking</c>: <see cref="BlockingBench"/>, its report written and printed.</summary>
    private static async Task<int> RunBlockingAsync(ParseResult parse, Option<string?> output, Option<int?> products, Option<string?> points, Option<int> window, CancellationToken cancellationToken)
    {
        var options = new BlockingBench.Options(
            Folder(parse, output, ResultsFolders.Blocking),
            ParsePoints(parse.GetValue(points)) ?? BlockingBench.DefaultPoints,
            TimeSpan.FromSeconds(parse.GetValue(window)),
            parse.GetValue(products) ?? 2_000,
            LocalSystem.LocalSystem.CurrentConfiguration);
        var rows = await BlockingBench.RunAsync(options, Progress, cancellationToken);
        // The naive rung's slow pages are the finding; a failed page is not.
        return await PublishAsync(options.OutputDirectory, ReportFiles.Report, rows, BlockingBench.Markdown(options, rows, CommandLine(parse)), rows.Any(r => r.Failed > 0), cancellationToken);
    }

    private static async Task<int> RunGrpcAsync(ParseResult parse, Option<string?> output, Option<int?> products, Option<int> requests, Option<int> warmUp, CancellationToken cancellationToken)
    {
        var options = new GrpcBench.Options(
            Folder(parse, output, ResultsFolders.Grpc),
            parse.GetValue(products) ?? LocalSystemOptions.DefaultProducts,
            parse.GetValue(requests),
            TimeSpan.FromSeconds(parse.GetValue(warmUp)),
            LocalSystem.LocalSystem.CurrentConfiguration);
        var rows = await GrpcBench.RunAsync(options, Progress, cancellationToken);
        return await PublishAsync(options.OutputDirectory, ReportFiles.Report, rows, GrpcBench.Markdown(options, rows, CommandLine(parse)), rows.Any(r => r.Failed > 0), cancellationToken);
    }

    /// <summary><c>bench --protocols</c>: <see cref="ProtocolBench"/>, its report written and printed.</summary>
    private static async Task<int> RunProtocolsAsync(
        ParseResult parse, Option<string?> output, Option<int?> products, Option<int> requests, Option<int> uploads, Option<int> uploadMb, Option<int> warmUp, CancellationToken cancellationToken)
    {
        var options = new ProtocolBench.Options(
            Folder(parse, output, ResultsFolders.Protocols),
            parse.GetValue(products) ?? LocalSystemOptions.DefaultProducts,
            parse.GetValue(requests),
            parse.GetValue(uploads),
            parse.GetValue(uploadMb),
            TimeSpan.FromSeconds(parse.GetValue(warmUp)),
            LocalSystem.LocalSystem.CurrentConfiguration);
        var rows = await ProtocolBench.RunAsync(options, Progress, cancellationToken);
        return await PublishAsync(options.OutputDirectory, ReportFiles.Report, rows, ProtocolBench.Markdown(options, rows, CommandLine(parse)), rows.Any(r => r.Failed > 0), cancellationToken);
    }

    /// <summary>Re-renders every marked table of README.md and docs/ from the committed reports (<see cref="BenchSnippets"/>).</summary>
    private static async Task<int> UpdateDocsAsync(CancellationToken cancellationToken)
    {
        var root = LocalSystem.LocalSystem.RepositoryRoot();
        var reports = new CommittedReports(Path.Combine(root, "docs", "results"));
        foreach (var page in BenchSnippets.Pages(root))
        {
            var text = await File.ReadAllTextAsync(page, cancellationToken);
            var updated = BenchSnippets.Update(text, reports);
            if (updated != text)
            {
                await File.WriteAllTextAsync(page, updated, cancellationToken);
                Console.WriteLine($"updated {Path.GetRelativePath(root, page)}");
            }
        }

        return 0;
    }

    private static void Progress(string line) => Console.Error.WriteLine(line);

    /// <summary>The folder <c>--out</c> names, or the committed report's: <paramref name="results"/> under docs/results.</summary>
    private static string Folder(ParseResult parse, Option<string?> output, string results) =>
        parse.GetValue(output) ?? Path.Combine(LocalSystem.LocalSystem.RepositoryRoot(), "docs", "results", results);

    /// <summary>The command that remakes this run's report (<see cref="MadeBy.Command"/>).</summary>
    private static string CommandLine(ParseResult parse, bool asRoot = false) => MadeBy.Command(parse.Tokens.Select(t => t.Value), asRoot);

    /// <summary>Writes a report into <paramref name="folder"/> (<see cref="ReportFiles"/>) and prints its Markdown; the exit code: 1 where the run <paramref name="failed"/>.</summary>
    private static async Task<int> PublishAsync<T>(string folder, string name, T figures, string markdown, bool failed, CancellationToken cancellationToken)
    {
        await ReportFiles.WriteAsync(folder, name, figures, markdown, cancellationToken);
        Console.WriteLine(markdown);
        return failed ? 1 : 0;
    }

    private static string[] Split(string list) => list.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries);

    private static int[]? ParsePoints(string? list) =>
        list is null ? null : Split(list).Select(p => int.Parse(p, System.Globalization.CultureInfo.InvariantCulture) is > 0 and var n ? n : throw new ArgumentException("--points must be positive.")).ToArray();

    private static Option<int> Positive(string name, string description, int defaultValue)
    {
        var option = new Option<int>(name) { Description = description, DefaultValueFactory = _ => defaultValue };
        option.Validators.Add(result =>
        {
            if (result.GetValueOrDefault<int>() < 1)
            {
                result.AddError($"{name} must be at least 1.");
            }
        });
        return option;
    }
}
