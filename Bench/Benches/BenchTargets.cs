namespace Bench.Benches;

/// <summary>
/// The project's performance targets, each a ratio of two figures from the same run (one is a total): the
/// naive-vs-optimized goals (how much a lesson's optimized rung must beat its naive one), and the optimized-vs-limit
/// goals (how close the optimized path comes to serving static bytes, or to a sink that only reads). They are stated at the default sizes (25 MB catalog, 100 MB upload); at other sizes they
/// are still computed, for the record. A target whose figures the run did not measure is not met or missed.
/// </summary>
public static class BenchTargets
{
    public static IReadOnlyList<TargetCheck> Check(IReadOnlyList<PhaseResult> phases, BenchOptions options)
    {
        static double? Ratio(PhaseResult? top, PhaseResult? bottom, Func<PhaseResult, double> figure) =>
            top is null || bottom is null || figure(bottom) <= 0 ? null : figure(top) / figure(bottom);
        static double CatalogPlusFrontend(PhaseResult phase) =>
            phase.Services.Where(s => s.Key is "Catalog.Api" or "Frontend.Api").Sum(s => (double)s.Value.PeakWorkingSetBytes);
        static double GatewayCpu(PhaseResult phase) => phase.Services["Gateway"].CpuMsPerRequest;
        PhaseResult? Find(string scenario, string mode, int concurrency = 1) => phases.Find(scenario, mode, concurrency);

        var loaded = options.Concurrency;
        var products = Find("products", BenchRunner.Optimized);
        var totalCpuSeconds = products?.Services.Values.Sum(s => s.CpuMsPerRequest) / 1000;
        return
        [
            TargetCheck.AtMostOf("product list p50 latency", "optimized / naive", Ratio(products, Find("products", BenchRunner.Naive), p => p.P50Ms), 0.1),
            TargetCheck.AtMostOf("product list time to first byte (p50)", "optimized / naive", Ratio(products, Find("products", BenchRunner.Naive), p => p.FirstByteP50Ms), 0.02),
            TargetCheck.AtMostOf($"peak working set of Catalog.Api + Frontend.Api, {loaded} concurrent fetches", "optimized / naive", Ratio(Find("products", BenchRunner.Optimized, loaded), Find("products", BenchRunner.Naive, loaded), CatalogPlusFrontend), 0.1),
            TargetCheck.AtMostOf("product list p50 latency end to end", "optimized / static-bytes baseline", Ratio(products, Find("products", BenchRunner.Baseline), p => p.P50Ms), 2),
            TargetCheck.AtMostOf($"product list p50 latency, {loaded} in flight", "optimized / static-bytes baseline", Ratio(Find("products", BenchRunner.Optimized, loaded), Find("products", BenchRunner.Baseline, loaded), p => p.P50Ms), 2),
            TargetCheck.AtMostOf("catalog p50 latency", "optimized / static-bytes baseline", Ratio(Find("catalog", BenchRunner.Optimized), Find("catalog", BenchRunner.Baseline), p => p.P50Ms), 3),
            TargetCheck.AtMostOf("Gateway CPU per catalog relay (same bytes)", "optimized / static-bytes baseline", Ratio(Find("catalog", BenchRunner.Optimized), Find("catalog", BenchRunner.Baseline), GatewayCpu), 1.3),
            TargetCheck.AtMostOf("CPU seconds per optimized product list, Gateway + Frontend.Api + Catalog.Api", "total", totalCpuSeconds, 0.35),
            TargetCheck.AtMostOf("Gateway overhead on the optimized product list, p50", "via Gateway / direct to Frontend.Api", Ratio(products, Find("products-direct", BenchRunner.Optimized), p => p.P50Ms), 1.1),
            TargetCheck.AtLeastOf($"{options.UploadMiB} MiB upload throughput", "optimized / naive", Ratio(Find("upload", BenchRunner.Optimized), Find("upload", BenchRunner.Naive), p => p.MiBPerSecond), 10),
            TargetCheck.AtLeastOf($"{options.UploadMiB} MiB upload throughput", "optimized / raw sink", Ratio(Find("upload", BenchRunner.Optimized), Find("upload", BenchRunner.Baseline), p => p.MiBPerSecond), 0.8),
            // Every rung must hash what it stores: the sink that also hashes (scenario upload-sha256) is the limit that leaves.
            TargetCheck.AtLeastOf($"{options.UploadMiB} MiB upload throughput", "optimized / sink that hashes", Ratio(Find("upload-sha256", BenchRunner.Optimized), Find("upload-sha256", BenchRunner.Baseline), p => p.MiBPerSecond), 0.8),
        ];
    }
}
