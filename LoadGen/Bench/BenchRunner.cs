using System.Diagnostics;
using System.Runtime.InteropServices;
using HttpPerf.ServiceDefaults;
using HttpPerf.ServiceDefaults.Flags;
using LoadGen.Load;
using LoadGen.LocalSystem;

namespace LoadGen.Bench;

/// <summary>
/// The project's benchmark: for each mode and scenario, a fresh set of the four services as separate
/// processes on loopback (the AppHost's configuration contract) with every flag set to that mode in the
/// flags file, measuring latency on the client and each service's working set, CPU,
/// allocations and temp-file bytes. "baseline" is the limit: optimized flags, and each scenario's
/// cheapest equivalent (the same bytes from memory through the same hops; the upload sink).
/// </summary>
public static class BenchRunner
{
    public const string Naive = "naive";
    public const string Optimized = "optimized";
    public const string Baseline = "baseline";

    public static readonly string[] Modes = [Naive, Optimized, Baseline];

    private static readonly double[] Percentiles = [0, 50, 75, 90, 95, 99, 99.9];

    /// <summary>
    /// What a scenario sends: <c>Request</c> in naive and optimized (the flags file decides which serves it),
    /// <c>BaselineRequest</c> in the baseline mode, null where the scenario has no baseline. The argument is the
    /// id of a stored upload, for downloads.
    /// </summary>
    private sealed record Step(string Scenario, string[] Services, int Concurrency, int Requests, long RequestBytes, Func<string?, HttpRequestMessage> Request, Func<string?, HttpRequestMessage>? BaselineRequest);

    public static async Task<BenchResult> RunAsync(BenchOptions options, Action<string>? progress = null, CancellationToken cancellationToken = default)
    {
        progress ??= _ => { };
        var machine = new MachineInfo(RuntimeInformation.OSDescription, Environment.ProcessorCount, RuntimeInformation.FrameworkDescription, options.Configuration, DateTimeOffset.UtcNow);
        var work = Directory.CreateTempSubdirectory("httpperf-bench-").FullName;
        var phases = new List<PhaseResult>();
        try
        {
            foreach (var mode in Modes)
            {
                phases.AddRange(await RunModeAsync(options, mode, work, progress, cancellationToken));
            }
        }
        finally
        {
            Directory.Delete(work, recursive: true);
        }

        return new BenchResult(machine, options, phases, BenchTargets.Check(phases, options));
    }

    private static async Task<List<PhaseResult>> RunModeAsync(BenchOptions options, string mode, string work, Action<string> progress, CancellationToken cancellationToken)
    {
        var flagsMode = mode == Baseline ? Optimized : mode;
        await FlagsFile.WriteAsync(Path.Combine(work, "flags.json"), Pitfalls.All.ToDictionary(p => p.Flag, _ => flagsMode), cancellationToken);
        var uploadBytes = options.UploadMiB * 1_048_576L;
        string[] products = ["Gateway", "Frontend.Api", "Catalog.Api"], catalog = ["Gateway", "Catalog.Api"], uploads = ["Gateway", "Uploads.Api"];
        Step[] steps =
        [
            new("products", products, 1, options.Requests, 0, _ => Get("/api/products"), _ => Get("/api/products/baseline")),
            new("products", products, options.Concurrency, options.ConcurrentRequests, 0, _ => Get("/api/products"), _ => Get("/api/products/baseline")),
            new("catalog", catalog, 1, options.Requests, 0, _ => Get("/api/catalog/products"), _ => Get("/api/catalog/products/baseline")),
            new("catalog", catalog, options.Concurrency, options.ConcurrentRequests, 0, _ => Get("/api/catalog/products"), _ => Get("/api/catalog/products/baseline")),
            new("export", catalog, 1, options.Requests, 0, _ => Get("/api/catalog/export"), null),
            new("upload", uploads, 1, options.UploadRequests, uploadBytes, _ => Post("/api/uploads", uploadBytes), _ => Post("/api/uploads/sink", uploadBytes)),
            new("download", uploads, 1, options.UploadRequests, 0, id => Get($"/api/uploads/{id}"), null),
        ];

        var results = new List<PhaseResult>();
        foreach (var step in steps)
        {
            var request = mode == Baseline ? step.BaselineRequest : step.Request;
            if (request is null)
            {
                continue;
            }

            // Fresh processes for every phase: a peak working set belongs to this phase alone.
            progress($"{mode}: {step.Scenario}, {step.Requests} requests, {step.Concurrency} in flight");
            await using var system = await StartAsync(options, work, cancellationToken);
            using var client = new HttpClient { BaseAddress = system.Gateway.BaseAddress, Timeout = TimeSpan.FromMinutes(10) };
            var downloadId = step.Scenario == "download" ? await SyntheticFileContent.StoreAsync(client, uploadBytes, cancellationToken) : null;
            var services = system.Services.Where(s => step.Services.Contains(s.Name)).ToList();
            results.Add(await MeasureAsync(system, client, step, mode, services, () => request(downloadId), cancellationToken));
        }

        return results;
    }

    private static Task<LocalSystem.LocalSystem> StartAsync(BenchOptions options, string work, CancellationToken cancellationToken)
    {
        var uploads = Path.Combine(work, "uploads");
        if (Directory.Exists(uploads))
        {
            Directory.Delete(uploads, recursive: true); // the previous phase's files
        }

        var environment = new Dictionary<string, string>
        {
            ["Uploads__EnableSink"] = "true",
            ["Catalog__EnableBaseline"] = "true",
            ["Frontend__EnableBaseline"] = "true",
        };
        return LocalSystem.LocalSystem.StartAsync(
            new LocalSystemOptions { ProductCount = options.ProductCount, WorkDirectory = work, Configuration = options.Configuration, Environment = environment },
            cancellationToken);
    }

    private static async Task<PhaseResult> MeasureAsync(
        LocalSystem.LocalSystem system, HttpClient client, Step step, string mode, IReadOnlyList<ServiceProcess> services, Func<HttpRequestMessage> request, CancellationToken cancellationToken)
    {
        // Warm-up (JIT, connection pools, the baseline's cached bytes), one request at a time, not measured.
        await LoadRunner.RunAsync(client, _ => (mode, request()), requests: 2, concurrency: 1, cancellationToken);

        var before = await ReadCountersAsync(services, cancellationToken);
        var sampler = new ResourceSampler(services, s => system.TempDirectory(s.Name));
        var started = Stopwatch.GetTimestamp();
        var stats = (await LoadRunner.RunAsync(client, _ => (mode, request()), step.Requests, step.Concurrency, cancellationToken, keysInOrder: [mode]))[0];
        var seconds = Stopwatch.GetElapsedTime(started).TotalSeconds;
        var peaks = await sampler.StopAsync();
        var after = await ReadCountersAsync(services, cancellationToken);

        var figures = services.ToDictionary(
            s => s.Name,
            s => new ServiceFigures(
                PeakWorkingSetBytes: peaks[s.Name],
                AllocatedBytesPerRequest: (after[s.Name].AllocatedBytes - before[s.Name].AllocatedBytes) / Math.Max(1, stats.Count),
                CpuMsPerRequest: (after[s.Name].CpuSeconds - before[s.Name].CpuSeconds) * 1000 / Math.Max(1, stats.Count),
                PeakTempBytes: sampler.PeakTempBytes.GetValueOrDefault(s.Name)));
        var workingSet = sampler.Series.Select(sample => new WorkingSetPoint(sample.Seconds, sample.WorkingSet.Values.Sum())).ToList();
        return new PhaseResult(
            step.Scenario, mode, step.Concurrency, stats.Count, stats.Errors, stats.MeanBodyBytes, step.RequestBytes,
            stats.PercentileMs(50), stats.PercentileMs(90), stats.PercentileMs(99), stats.FirstBytePercentileMs(50), seconds,
            figures, Percentiles.Select(p => new PercentilePoint(p, stats.PercentileMs(p))).ToList(), workingSet);
    }

    private static async Task<Dictionary<string, RuntimeCounters>> ReadCountersAsync(IReadOnlyList<ServiceProcess> services, CancellationToken cancellationToken)
    {
        var counters = new Dictionary<string, RuntimeCounters>();
        foreach (var service in services)
        {
            counters[service.Name] = await service.ReadRuntimeCountersAsync(cancellationToken);
        }

        return counters;
    }

    private static HttpRequestMessage Get(string path) => new(HttpMethod.Get, path);

    private static HttpRequestMessage Post(string path, long bytes) => new(HttpMethod.Post, path) { Content = SyntheticFileContent.Create(bytes) };

}
