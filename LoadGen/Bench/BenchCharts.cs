using ScottPlot;

namespace LoadGen.Bench;

/// <summary>
/// PNG charts with ScottPlot, for each scenario and concurrency: latency by percentile (one line per
/// mode) and the scenario's services' summed working set over the phase (one line per mode).
/// </summary>
public static class BenchCharts
{
    private static readonly double[] PercentileTicks = [0, 50, 90, 99, 99.9];

    /// <summary>Writes the charts; returns their file names by scenario and concurrency.</summary>
    public static IReadOnlyDictionary<(string Scenario, int Concurrency), IReadOnlyList<string>> Write(BenchResult result, string folder)
    {
        var files = new Dictionary<(string, int), IReadOnlyList<string>>();
        foreach (var (scenario, concurrency) in BenchReport.Groups(result))
        {
            var phases = result.Phases.Where(p => p.Scenario == scenario && p.Concurrency == concurrency).ToList();
            var stem = $"{scenario}-c{concurrency}";
            var where = concurrency == 1 ? "one at a time" : $"{concurrency} in flight";

            var latency = new Plot();
            foreach (var phase in phases)
            {
                // Percentile p sits at -log10(1 - p/100): 50 → 0.3, 90 → 1, 99 → 2, 99.9 → 3, so the tail gets room.
                var line = latency.Add.Scatter(phase.Latency.Select(l => Nines(l.Percentile)).ToArray(), phase.Latency.Select(l => l.Ms).ToArray());
                line.LegendText = phase.Mode;
            }

            latency.Title($"{scenario}, {where}: latency by percentile");
            latency.XLabel("percentile");
            latency.YLabel("ms");
            latency.Axes.Bottom.TickGenerator = new ScottPlot.TickGenerators.NumericManual(
                PercentileTicks.Select(Nines).ToArray(), PercentileTicks.Select(p => $"p{p}").ToArray());
            latency.Axes.SetLimitsY(0, phases.Max(p => p.Latency.Max(l => l.Ms)) * 1.1);
            latency.ShowLegend(Alignment.UpperLeft);
            latency.SavePng(Path.Combine(folder, $"{stem}-latency.png"), 800, 450);

            var memory = new Plot();
            foreach (var phase in phases)
            {
                var line = memory.Add.Scatter(phase.WorkingSet.Select(w => w.Seconds).ToArray(), phase.WorkingSet.Select(w => w.Bytes / 1e6).ToArray());
                line.LegendText = phase.Mode;
                line.MarkerSize = 0;
            }

            memory.Title($"{scenario}, {where}: working set of {string.Join(" + ", phases[0].Services.Keys)}");
            memory.XLabel("seconds into the phase");
            memory.YLabel("MB");
            memory.Axes.SetLimitsY(0, phases.Max(p => p.WorkingSet.Count == 0 ? 1 : p.WorkingSet.Max(w => w.Bytes / 1e6)) * 1.1);
            memory.ShowLegend(Alignment.UpperRight);
            memory.SavePng(Path.Combine(folder, $"{stem}-working-set.png"), 800, 450);

            files[(scenario, concurrency)] = [$"{stem}-latency.png", $"{stem}-working-set.png"];
        }

        return files;
    }

    private static double Nines(double percentile) => -Math.Log10(1 - Math.Min(percentile, 99.9) / 100);
}
