using Bench.Benches;
using ScottPlot;

namespace Bench.Reports;

/// <summary>
/// PNG charts with ScottPlot, for each scenario and concurrency: latency by percentile (one line per
/// mode), the scenario's services' summed working set over the phase (one line per mode), and CPU per
/// request stacked by service (one bar per mode).
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

            WriteCpu(phases, $"{scenario}, {where}: CPU per request by service", Path.Combine(folder, $"{stem}-cpu.png"));
            files[(scenario, concurrency)] = [$"{stem}-latency.png", $"{stem}-working-set.png", $"{stem}-cpu.png"];
        }

        return files;
    }

    /// <summary>One bar per phase (mode), split into each service's CPU ms per request, so the hop that costs most shows.</summary>
    private static void WriteCpu(IReadOnlyList<PhaseResult> phases, string title, string path)
    {
        var plot = new Plot();
        var palette = new ScottPlot.Palettes.Category10();
        var services = phases[0].Services.Keys.ToList();
        var bars = new List<Bar>();
        for (var position = 0; position < phases.Count; position++)
        {
            var bottom = 0.0;
            for (var s = 0; s < services.Count; s++)
            {
                var top = bottom + phases[position].Services[services[s]].CpuMsPerRequest;
                bars.Add(new Bar { Position = position, ValueBase = bottom, Value = top, FillColor = palette.GetColor(s) });
                bottom = top;
            }
        }

        plot.Add.Bars(bars);
        plot.Title(title);
        plot.YLabel("CPU ms per request");
        plot.Axes.Bottom.TickGenerator = new ScottPlot.TickGenerators.NumericManual(
            Enumerable.Range(0, phases.Count).Select(i => (double)i).ToArray(), phases.Select(p => p.Mode).ToArray());
        plot.Axes.Margins(bottom: 0);
        plot.ShowLegend(services.Select((service, s) => new LegendItem { LabelText = service, FillColor = palette.GetColor(s) }), Alignment.UpperRight);
        plot.SavePng(path, 800, 450);
    }

    /// <summary>A sweep's two charts: p50 latency and summed peak working set over the sweep's axis, one line per mode.</summary>
    public static IReadOnlyList<string> WriteSweep(BenchResult result, string folder)
    {
        var stem = $"sweep-{result.Options.Sweep}";
        string[] files = [$"{stem}-latency.png", $"{stem}-working-set.png"];
        foreach (var (file, title, unit, y) in new (string, string, string, Func<PhaseResult, double>)[]
        {
            (files[0], "p50 latency", "ms", p => p.P50Ms),
            (files[1], "peak working set, all services on the path", "MB", SweepReport.PeakWorkingSetMb),
        })
        {
            var plot = new Plot();
            foreach (var mode in BenchRunner.Modes)
            {
                var phases = result.Phases.Where(p => p.Mode == mode).OrderBy(p => SweepReport.X(result, p)).ToList();
                if (phases.Count == 0)
                {
                    continue;
                }

                // Sizes and concurrencies grow by factors, so both axes are log10 with plain labels.
                var line = plot.Add.Scatter(phases.Select(p => Math.Log10(SweepReport.X(result, p))).ToArray(), phases.Select(p => Math.Log10(Math.Max(y(p), 0.01))).ToArray());
                line.LegendText = mode;
            }

            plot.Axes.Bottom.TickGenerator = new ScottPlot.TickGenerators.NumericAutomatic { LabelFormatter = v => Plain(Math.Pow(10, v)) };
            plot.Axes.Left.TickGenerator = new ScottPlot.TickGenerators.NumericAutomatic { LabelFormatter = v => Plain(Math.Pow(10, v)) };
            plot.Title($"product list: {title} by {SweepReport.Axis(result)}");
            plot.XLabel(SweepReport.Axis(result) + " (log scale)");
            plot.YLabel(unit + " (log scale)");
            plot.ShowLegend(Alignment.UpperLeft);
            plot.SavePng(Path.Combine(folder, file), 800, 450);
        }

        return files;
    }

    private static string Plain(double value) => value >= 10 ? value.ToString("N0", System.Globalization.CultureInfo.InvariantCulture) : value.ToString("0.##", System.Globalization.CultureInfo.InvariantCulture);

    private static double Nines(double percentile) => -Math.Log10(1 - Math.Min(percentile, 99.9) / 100);
}
