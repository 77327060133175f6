namespace LoadGen.Bench;

/// <summary>
/// The project's performance targets (issue "LoadGen"), each a ratio of two figures from the same run.
/// They are stated at the default sizes (25 MB catalog, 100 MB upload); at other sizes they are still
/// computed, for the record.
/// </summary>
public static class BenchTargets
{
    public static IReadOnlyList<TargetCheck> Check(IReadOnlyList<PhaseResult> phases, BenchOptions options)
    {
        double? Ratio(PhaseResult? top, PhaseResult? bottom, Func<PhaseResult, double> figure) =>
            top is null || bottom is null || figure(bottom) <= 0 ? null : figure(top) / figure(bottom);
        static double CatalogPlusFrontend(PhaseResult phase) =>
            phase.Services.Where(s => s.Key is "Catalog.Api" or "Frontend.Api").Sum(s => (double)s.Value.PeakWorkingSetBytes);

        var naive = phases.Find("products", BenchRunner.Naive, 1);
        var optimized = phases.Find("products", BenchRunner.Optimized, 1);
        var baseline = phases.Find("products", BenchRunner.Baseline, 1);
        var naiveLoaded = phases.Find("products", BenchRunner.Naive, options.Concurrency);
        var optimizedLoaded = phases.Find("products", BenchRunner.Optimized, options.Concurrency);
        var naiveUpload = phases.Find("upload", BenchRunner.Naive, 1);
        var optimizedUpload = phases.Find("upload", BenchRunner.Optimized, 1);
        var sink = phases.Find("upload", BenchRunner.Baseline, 1);

        return
        [
            TargetCheck.AtMostOf("product list p50 latency", "optimized / naive", Ratio(optimized, naive, p => p.P50Ms), 0.1),
            TargetCheck.AtMostOf("product list time to first byte (p50)", "optimized / naive", Ratio(optimized, naive, p => p.FirstByteP50Ms), 0.02),
            TargetCheck.AtMostOf($"peak working set of Catalog.Api + Frontend.Api, {options.Concurrency} concurrent fetches", "optimized / naive", Ratio(optimizedLoaded, naiveLoaded, CatalogPlusFrontend), 0.1),
            TargetCheck.AtMostOf("product list p50 latency end to end", "optimized / static-bytes baseline", Ratio(optimized, baseline, p => p.P50Ms), 2),
            TargetCheck.AtLeastOf($"{options.UploadMiB} MiB upload throughput", "optimized / naive", Ratio(optimizedUpload, naiveUpload, p => p.MiBPerSecond), 10),
            TargetCheck.AtLeastOf($"{options.UploadMiB} MiB upload throughput", "optimized / raw sink", Ratio(optimizedUpload, sink, p => p.MiBPerSecond), 0.7),
        ];
    }
}
