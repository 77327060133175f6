using Bench.Sampling;
using System.Diagnostics;
using HttpPerf.ServiceDefaults.Telemetry;

namespace Bench.Benches;

/// <summary>
/// The project's benchmark: for each scenario and load, a fresh set of the four services as separate
/// processes on loopback (the AppHost's configuration contract) with every flag set to the mode in the
/// flags file, measuring latency on the client and each service's working set, CPU,
/// allocations and temp-file bytes. "baseline" is the limit: optimized flags, and each scenario's
/// cheapest equivalent (the same bytes from memory through the same hops; the upload sink). The baseline
/// runs right after the optimized phase, in the same processes, so the two are compared on equal terms,
/// and so does "streaming" (the middle rung of the scenarios that have one), last, after the flags file
/// is switched to it and the services are seen serving it; naive gets processes of its own, so that its
/// peak working set is its alone.
/// A sweep runs the product list over catalog sizes or over requests in flight instead.
/// </summary>
public static class BenchRunner
{
    public const string Naive = PerfMode.Naive;
    public const string Streaming = PerfMode.Streaming;
    public const string Optimized = PerfMode.Optimized;
    public const string Baseline = "baseline";

    public const string SizeSweep = "size";
    public const string ConcurrencySweep = "concurrency";

    public static readonly string[] Modes = [Naive, Streaming, Optimized, Baseline];

    /// <summary>Product counts giving about 0.3, 3, 25 and 100 MB of catalog JSON (about 300 bytes a product).</summary>
    public static readonly int[] SizePoints = [1_000, 10_000, 86_000, 340_000];

    public static readonly int[] ConcurrencyPoints = [1, 4, 16, 64];

    /// <summary>The concurrency sweep's catalog unless <c>--products</c> says otherwise: 3 MB, so 64 naive fetches fit in memory.</summary>
    public const int ConcurrencySweepProducts = 10_000;

    private static readonly double[] Percentiles = [0, 50, 75, 90, 95, 99, 99.9];

    // Tiered compilation recompiles hot methods in the background well after they first run: on fresh processes, 10 s
    // into 100 MiB uploads, the JIT still took 20-30% of a core in Gateway and Uploads.Api each (perf), charged to the phase.
    private const double WarmJitShare = 0.03;
    private const int MaxWarmUpRequests = 100;

    /// <summary>One phase to measure: a scenario in a mode, so many requests at so many in flight, on a catalog of a size.</summary>
    private sealed record Phase(BenchScenario Scenario, string Mode, int Concurrency, int Requests, int? Products);

    public static async Task<BenchResult> RunAsync(BenchOptions options, Action<string>? progress = null, CancellationToken cancellationToken = default)
    {
        progress ??= _ => { };
        var machine = MachineInfo.Now(options.Configuration);
        var work = Directory.CreateTempSubdirectory("httpperf-bench-").FullName;
        var results = new List<PhaseResult>();
        try
        {
            foreach (var phases in Plan(options))
            {
                results.AddRange(await RunInOneProcessSetAsync(options, phases, work, progress, cancellationToken));
            }
        }
        finally
        {
            Directory.Delete(work, recursive: true);
        }

        return new BenchResult(machine, options, results, options.Sweep is null ? BenchTargets.Check(results, options) : []);
    }

    /// <summary>The phases to run, each list in one fresh set of processes: naive alone; optimized, then its baseline, then streaming.</summary>
    private static IEnumerable<IReadOnlyList<Phase>> Plan(BenchOptions options)
    {
        IEnumerable<IReadOnlyList<Phase>> EveryMode(BenchScenario scenario, int concurrency, int requests, int? products)
        {
            yield return [new Phase(scenario, Naive, concurrency, requests, products)];
            var modes = new[] { Optimized, scenario.Baseline is null ? null : Baseline, scenario.Streaming ? Streaming : null };
            yield return modes.OfType<string>().Select(mode => new Phase(scenario, mode, concurrency, requests, products)).ToList();
        }

        var products = BenchScenarios.Find("products");
        return options.Sweep switch
        {
            null => BenchScenarios.Select([.. options.Scenarios]).SelectMany(scenario =>
            {
                var requests = scenario.Uploads || scenario.Downloads ? options.UploadRequests : options.Requests;
                var single = EveryMode(scenario, 1, requests, options.ProductCount);
                return scenario.Loaded ? single.Concat(EveryMode(scenario, options.Concurrency, options.ConcurrentRequests, options.ProductCount)) : single;
            }),
            SizeSweep => (options.Points ?? SizePoints).SelectMany(count => EveryMode(products, 1, options.Requests, count)),
            ConcurrencySweep => (options.Points ?? ConcurrencyPoints).SelectMany(concurrency =>
                EveryMode(products, concurrency, Math.Max(options.Requests, 2 * concurrency), options.ProductCount ?? ConcurrencySweepProducts)),
            _ => throw new ArgumentException($"Unknown sweep '{options.Sweep}': use {SizeSweep} or {ConcurrencySweep}."),
        };
    }

    private static async Task<List<PhaseResult>> RunInOneProcessSetAsync(
        BenchOptions options, IReadOnlyList<Phase> phases, string work, Action<string> progress, CancellationToken cancellationToken)
    {
        // A catalog of another size is seeded in its own folder (the seed is kept between phases of one size).
        var products = phases[0].Products;
        var folder = Directory.CreateDirectory(Path.Combine(work, products is { } n ? $"products-{n}" : "default")).FullName;
        var flagsFile = Path.Combine(folder, "flags.json");
        var flags = FlagsOf(phases[0].Mode);
        await WriteFlagsAsync(flagsFile, flags, cancellationToken);

        await using var system = await StartAsync(options, products, folder, cancellationToken);
        var results = new List<PhaseResult>();
        foreach (var phase in phases)
        {
            progress($"{phase.Mode}: {phase.Scenario.Name}, {phase.Requests} requests, {phase.Concurrency} in flight{(phase.Products is { } count ? $", {count:N0} products" : "")}");
            var entry = phase.Scenario.Entry == Entry.Frontend ? system.Frontend : system.Gateway;
            using var client = new HttpClient { BaseAddress = entry.BaseAddress, Timeout = TimeSpan.FromMinutes(10) };
            var uploadBytes = options.UploadMiB * 1_048_576L;
            var downloadId = phase.Scenario.Downloads ? await SyntheticFileContent.StoreAsync(client, uploadBytes, cancellationToken) : null;
            var requests = new BenchRequests(uploadBytes, downloadId);
            var build = phase.Mode == Baseline ? phase.Scenario.Baseline! : phase.Scenario.Request;
            if (FlagsOf(phase.Mode) != flags)
            {
                flags = FlagsOf(phase.Mode);
                await WriteFlagsAsync(flagsFile, flags, cancellationToken);
                var mode = flags;
                await UntilServedAsync(client, () => build(requests), served => PerfMode.Summarize(served) == mode, $"every hop in {mode}", cancellationToken);
            }

            var services = system.Services.Where(s => phase.Scenario.Services.Contains(s.Name)).ToList();
            results.Add(await MeasureAsync(options, system, client, phase, services, () => build(requests), phase.Scenario.Uploads ? uploadBytes : 0, cancellationToken));
        }

        return results;
    }

    /// <summary>The flags a phase runs under: its own mode, optimized for the baseline.</summary>
    private static string FlagsOf(string mode) => mode == Baseline ? Optimized : mode;

    /// <summary>Every flag at <paramref name="mode"/>, or at optimized where the flag has no such rung.</summary>
    private static Task WriteFlagsAsync(string path, string mode, CancellationToken cancellationToken) =>
        FlagsFile.WriteAsync(path, Pitfalls.All.ToDictionary(p => p.Flag, p => p.Serving(mode)), cancellationToken);

    private static Task<LocalSystem.LocalSystem> StartAsync(BenchOptions options, int? products, string folder, CancellationToken cancellationToken)
    {
        var uploads = Path.Combine(folder, "uploads");
        if (Directory.Exists(uploads))
        {
            Directory.Delete(uploads, recursive: true); // the previous phase's files
        }

        var environment = new Dictionary<string, string>
        {
            [SystemContract.UploadsEnableSink] = "true",
            // Every upload phase stores its warm-up and measured files: 1 GiB runs pass the 10 GiB default quota.
            [SystemContract.UploadsMaxStoredBytes] = (1L << 40).ToString(System.Globalization.CultureInfo.InvariantCulture),
            [SystemContract.CatalogEnableBaseline] = "true",
            [SystemContract.FrontendEnableBaseline] = "true",
        };
        return LocalSystem.LocalSystem.StartAsync(
            new LocalSystemOptions { ProductCount = products, WorkDirectory = folder, Configuration = options.Configuration, Environment = environment },
            cancellationToken);
    }

    private static async Task<PhaseResult> MeasureAsync(
        BenchOptions options, LocalSystem.LocalSystem system, HttpClient client, Phase phase, IReadOnlyList<ServiceProcess> services, Func<HttpRequestMessage> request, long requestBytes, CancellationToken cancellationToken)
    {
        var mode = phase.Mode;
        var buffer = phase.Scenario.ReadBufferBytes;

        await WarmUpAsync(client, () => (mode, request()), services, options.WarmUp, buffer, cancellationToken);

        var before = await ReadCountersAsync(services, cancellationToken);
        var sampler = new ResourceSampler(services, s => system.TempDirectory(s.Name));
        var started = Stopwatch.GetTimestamp();
        var stats = (await LoadRunner.RunAsync(client, _ => (mode, request()), phase.Requests, phase.Concurrency, cancellationToken, buffer, keysInOrder: [mode]))[0];
        var seconds = Stopwatch.GetElapsedTime(started).TotalSeconds;
        var peaks = await sampler.StopAsync();
        var after = await ReadCountersAsync(services, cancellationToken);

        var figures = services.ToDictionary(
            s => s.Name,
            s => new ServiceFigures(
                PeakWorkingSetBytes: peaks[s.Name],
                AllocatedBytesPerRequest: (after[s.Name].AllocatedBytes - before[s.Name].AllocatedBytes) / Math.Max(1, stats.Count),
                CpuMsPerRequest: (after[s.Name].CpuSeconds - before[s.Name].CpuSeconds) * 1000 / Math.Max(1, stats.Count),
                PeakTempBytes: sampler.PeakTempBytes.GetValueOrDefault(s.Name),
                MeanWriteBytes: (after[s.Name].ResponseBodyBytes - before[s.Name].ResponseBodyBytes) / Math.Max(1, after[s.Name].ResponseWrites - before[s.Name].ResponseWrites)));
        var workingSet = sampler.Series.Select(sample => new WorkingSetPoint(sample.Seconds, sample.WorkingSet.Values.Sum())).ToList();
        return new PhaseResult(
            phase.Scenario.Name, mode, phase.Concurrency, stats.Count, stats.Errors, stats.MeanBodyBytes, requestBytes,
            stats.PercentileMs(50), stats.PercentileMs(90), stats.PercentileMs(99), stats.FirstBytePercentileMs(50), seconds,
            figures, Percentiles.Select(p => new PercentilePoint(p, stats.PercentileMs(p))).ToList(), workingSet);
    }

    /// <summary>
    /// Warm-up (JIT, connection pools, the baseline's cached bytes), one request at a time, not measured: <paramref name="warmUp"/>,
    /// then on while the services still spend a share of the time compiling, up to three times as long or 100 requests.
    /// </summary>
    internal static async Task WarmUpAsync(
        HttpClient client, Func<(string Mode, HttpRequestMessage Request)> request, IReadOnlyList<ServiceProcess> services, TimeSpan warmUp, int buffer, CancellationToken cancellationToken)
    {
        var warming = Stopwatch.GetTimestamp();
        var jitSeconds = await JitSecondsAsync(services, cancellationToken);
        for (var warmed = 2; ; warmed += 2)
        {
            var batch = Stopwatch.GetTimestamp();
            await LoadRunner.RunAsync(client, _ => request(), requests: 2, concurrency: 1, cancellationToken, buffer);
            var jitBefore = jitSeconds;
            jitSeconds = await JitSecondsAsync(services, cancellationToken);
            var compiling = (jitSeconds - jitBefore) / Stopwatch.GetElapsedTime(batch).TotalSeconds;
            var elapsed = Stopwatch.GetElapsedTime(warming);
            if (warmed >= MaxWarmUpRequests || elapsed >= 3 * warmUp || (elapsed >= warmUp && compiling < WarmJitShare))
            {
                break;
            }
        }
    }

    private static async Task<double> JitSecondsAsync(IReadOnlyList<ServiceProcess> services, CancellationToken cancellationToken) =>
        (await ReadCountersAsync(services, cancellationToken)).Values.Sum(c => c.JitSeconds);

    /// <summary>GETs <paramref name="path"/> until a response's <c>X-Perf-Variants</c> names <paramref name="expected"/> (a <c>flag=variant</c> just written to the flags file).</summary>
    internal static Task UntilServedAsync(HttpClient client, string path, string expected, CancellationToken cancellationToken) =>
        UntilServedAsync(client, () => new HttpRequestMessage(HttpMethod.Get, path), served => served.Split(',', StringSplitOptions.TrimEntries).Contains(expected), expected, cancellationToken);

    /// <summary>
    /// Sends <paramref name="request"/> until a response's <c>X-Perf-Variants</c> satisfies <paramref name="served"/> (the
    /// services watch the flags file), at most 100 times 100 ms apart; throws, naming <paramref name="what"/>, if none does.
    /// </summary>
    private static async Task UntilServedAsync(HttpClient client, Func<HttpRequestMessage> request, Func<string, bool> served, string what, CancellationToken cancellationToken)
    {
        var last = "";
        for (var attempt = 0; attempt < 100; attempt++)
        {
            using var response = await client.SendAsync(request(), HttpCompletionOption.ResponseHeadersRead, cancellationToken);
            await response.Content.CopyToAsync(Stream.Null, cancellationToken);
            last = response.Headers.TryGetValues(PerfMode.VariantsHeader, out var values) ? string.Join(", ", values) : "";
            if (served(last))
            {
                return;
            }

            await Task.Delay(100, cancellationToken);
        }

        throw new InvalidOperationException($"The services did not switch to {what}: the last answer was served by '{last}'.");
    }

    /// <summary>Each service's runtime counters, read one after the other.</summary>
    internal static async Task<Dictionary<string, RuntimeCounters>> ReadCountersAsync(IReadOnlyList<ServiceProcess> services, CancellationToken cancellationToken)
    {
        var counters = new Dictionary<string, RuntimeCounters>();
        foreach (var service in services)
        {
            counters[service.Name] = await service.ReadRuntimeCountersAsync(cancellationToken);
        }

        return counters;
    }
}
