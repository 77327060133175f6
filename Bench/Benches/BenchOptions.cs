
namespace Bench.Benches;

/// <summary>What <c>bench</c> runs. The defaults are the sizes the project's targets are stated at.</summary>
public sealed record BenchOptions
{
    /// <summary>The scenarios to run (<see cref="BenchScenarios"/>); ignored by a sweep, which runs the product list.</summary>
    public IReadOnlyList<string> Scenarios { get; init; } = BenchScenarios.Default;

    /// <summary>Null for the scenario table; <c>size</c> or <c>concurrency</c> for a sweep of the product list.</summary>
    public string? Sweep { get; init; }

    /// <summary>A sweep's points: product counts (size) or requests in flight (concurrency); null for the defaults.</summary>
    public IReadOnlyList<int>? Points { get; init; }

    /// <summary>Products the Catalog seeds; null keeps the service default (about 25 MB of JSON).</summary>
    public int? ProductCount { get; init; }

    /// <summary>Requests one at a time, per mode, for the latency figures.</summary>
    public int Requests { get; init; } = 20;

    /// <summary>Fetches in flight for the memory and throughput figures.</summary>
    public int Concurrency { get; init; } = 16;

    /// <summary>Requests per mode at <see cref="Concurrency"/>.</summary>
    public int ConcurrentRequests { get; init; } = 32;

    /// <summary>Size of the uploaded (and downloaded) file in MiB.</summary>
    public int UploadMiB { get; init; } = 100;

    /// <summary>Uploads and downloads per mode.</summary>
    public int UploadRequests { get; init; } = 5;

    /// <summary>
    /// How long each phase warms up before it is measured (at least two requests, at most 100): long enough for
    /// the hot methods to leave tier-0 code. .NET compiles a method fully optimized after 30 calls, once no new
    /// method has been compiled for 100 ms; measured after two requests only, the optimized product list ran at
    /// p50 344 ms, and at 236 ms after a longer run. Past it, the warm-up goes on while the services still spend
    /// over 3% of the time compiling, up to three times as long (BenchRunner): the background recompilation of hot
    /// methods outlasts 10 s on fresh processes under 100 MiB uploads.
    /// </summary>
    public TimeSpan WarmUp { get; init; } = DefaultWarmUp;

    public static readonly TimeSpan DefaultWarmUp = TimeSpan.FromSeconds(10);

    /// <summary>Where report.md, report.json and the charts go.</summary>
    public required string OutputDirectory { get; init; }

    /// <summary>Build configuration of the services it starts (Release for published numbers).</summary>
    public string Configuration { get; init; } = LocalSystem.LocalSystem.CurrentConfiguration;
}
