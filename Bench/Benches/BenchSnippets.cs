using HttpPerf.Measurement;
using Bench.Reports;
using System.Text.RegularExpressions;
using System.Text;
using HttpPerf.ServiceDefaults.Contract;
using static System.FormattableString;

namespace Bench.Benches;

/// <summary>
/// Figures that the README and docs/ quote, rendered from a committed report.json, so a page never
/// carries a number the report does not. A page marks each table:
/// <code>
/// &lt;!-- bench: headline --&gt;
/// ...table...
/// &lt;!-- /bench --&gt;
/// </code>
/// Names: <c>headline</c> (the summary of every scenario), <c>targets</c>,
/// <c>figures SCENARIO CONCURRENCY [SERVICE ...]</c> (one scenario's figures, with those services' own), and
/// <c>ladder SCENARIO CONCURRENCY FLAG</c> (a lesson's rungs: <see cref="BenchLadder"/>).
/// <c>bench --update-docs</c> rewrites every marked table from the committed report; a test checks that
/// doing so changes nothing.
/// </summary>
public static partial class BenchSnippets
{
    [GeneratedRegex(@"(?<open><!-- bench: (?<name>[^>]+?) -->\n)(?<body>.*?)(?<close><!-- /bench -->)", RegexOptions.Singleline)]
    private static partial Regex Marked();

    [GeneratedRegex(@"(?<open><!-- latency -->\n)(?<body>.*?)(?<close><!-- /latency -->)", RegexOptions.Singleline)]
    private static partial Regex LatencyTable();

    [GeneratedRegex(@"(?<open><!-- pitfalls -->\n)(?<body>.*?)(?<close><!-- /pitfalls -->)", RegexOptions.Singleline)]
    private static partial Regex PitfallTable();

    [GeneratedRegex(@"(?<open><!-- faults -->\n)(?<body>.*?)(?<close><!-- /faults -->)", RegexOptions.Singleline)]
    private static partial Regex FaultTable();

    [GeneratedRegex(@"(?<open><!-- protocols -->\n)(?<body>.*?)(?<close><!-- /protocols -->)", RegexOptions.Singleline)]
    private static partial Regex ProtocolTable();

    [GeneratedRegex(@"(?<open><!-- grpc -->\n)(?<body>.*?)(?<close><!-- /grpc -->)", RegexOptions.Singleline)]
    private static partial Regex GrpcTable();

    [GeneratedRegex(@"(?<open><!-- as-run -->\n)(?<body>.*?)(?<close><!-- /as-run -->)", RegexOptions.Singleline)]
    private static partial Regex AsRunTables();

    [GeneratedRegex(@"(?<open><!-- memory(: (?<flag>[^ >]+))? -->\n)(?<body>.*?)(?<close><!-- /memory -->)", RegexOptions.Singleline)]
    private static partial Regex MemoryTables();

    /// <summary>The committed report of each folder under <paramref name="resultsRoot"/>, each read once, when first asked for.</summary>
    public static Func<string, BenchResult> Reports(string resultsRoot)
    {
        var reports = new Dictionary<string, BenchResult>();
        return folder => reports.TryGetValue(folder, out var read) ? read : reports[folder] = BenchReport.Read(Path.Combine(resultsRoot, folder));
    }

    /// <summary>
    /// <paramref name="markdown"/> with every marked table rendered anew from <paramref name="reports"/> (<c>bench</c>,
    /// or the folder a marker names last: <c>... from uploads-100mib</c>), and the pitfall table
    /// (<c>&lt;!-- pitfalls --&gt;</c>) from <see cref="Pitfalls.All"/>.
    /// </summary>
    /// <c>&lt;!-- latency --&gt;</c> marks seed 003's table, rendered from <paramref name="latency"/> (docs/results/latency);
    /// <c>&lt;!-- faults --&gt;</c> Frontend.Replicas' table, from <paramref name="faults"/> (docs/results/faults, <c>bench --faults</c>);
    /// <c>&lt;!-- protocols --&gt;</c> Gateway.Upstream's, from <paramref name="protocols"/> (docs/results/protocols, <c>bench --protocols</c>);
    /// <c>&lt;!-- grpc --&gt;</c> Frontend.Grpc's, from <paramref name="grpc"/> (docs/results/grpc, <c>bench --grpc</c>);
    /// <c>&lt;!-- as-run --&gt;</c> the system as it is run, from <paramref name="asRun"/> (docs/results/as-run, <c>bench --as-run</c>);
    /// <c>&lt;!-- memory --&gt;</c> and <c>&lt;!-- memory: name --&gt;</c> what <paramref name="memory"/> renders by that name
    /// (<see cref="MemoryBench.Renderer"/>, from docs/results/memory: <c>bench --memory</c>).
    public static string Update(
        string markdown, Func<string, BenchResult> reports, Func<Latency.LatencyResult> latency, Func<IReadOnlyList<FaultBench.Row>> faults, Func<IReadOnlyList<ProtocolBench.Row>> protocols,
        Func<AsRunBench.Result> asRun, Func<string, string> memory, Func<IReadOnlyList<GrpcBench.Row>> grpc) =>
        GrpcTable().Replace(MemoryTables().Replace(AsRunTables().Replace(ProtocolTable().Replace(
            FaultTable().Replace(
                LatencyTable().Replace(
                    PitfallTable().Replace(
                        Marked().Replace(markdown, m => m.Groups["open"].Value + Render(m.Groups["name"].Value, reports) + m.Groups["close"].Value),
                        m => m.Groups["open"].Value + RenderPitfalls() + m.Groups["close"].Value),
                    m => m.Groups["open"].Value + Latency.LatencyReport.RenderSeedTable(latency()) + m.Groups["close"].Value),
                m => m.Groups["open"].Value + FaultBench.Table(faults()) + "\n" + m.Groups["close"].Value),
            m => m.Groups["open"].Value + ProtocolBench.Table(protocols()) + "\n" + m.Groups["close"].Value),
            m => m.Groups["open"].Value + AsRunBench.Tables(asRun()) + "\n" + m.Groups["close"].Value),
            m => m.Groups["open"].Value + memory(m.Groups["flag"].Value) + "\n" + m.Groups["close"].Value),
            m => m.Groups["open"].Value + GrpcBench.Table(grpc()) + "\n" + m.Groups["close"].Value);

    /// <summary>The folder under docs/results of <c>latency</c>'s committed report.</summary>
    public const string LatencyResults = "latency";

    private static string Render(string name, Func<string, BenchResult> report) =>
        name.Split(' ', StringSplitOptions.RemoveEmptyEntries) is [.. var table, "from", var folder]
            ? Render(report(folder), string.Join(' ', table))
            : Render(report(MainResults), name);

    /// <summary>The folder under docs/results of the report that a marker without <c>from</c> quotes.</summary>
    public const string MainResults = "bench";

    /// <summary>Whether <paramref name="markdown"/> has the pitfall table.</summary>
    public static bool HasPitfallTable(string markdown) => PitfallTable().IsMatch(markdown);

    /// <summary>The README's pitfall table: each flag, its service, and what each rung does, from <see cref="Pitfalls.All"/>.</summary>
    public static string RenderPitfalls()
    {
        var md = new StringBuilder();
        md.AppendLine("| flag | service | naive | streaming | optimized |");
        md.AppendLine("|---|---|---|---|---|");
        foreach (var pitfall in Pitfalls.All)
        {
            md.AppendLine($"| [`{pitfall.Flag}`](docs/pitfalls/{pitfall.Flag}.md) | {BenchLadder.Hop(pitfall)} | {pitfall.Naive} | {pitfall.Describe(PerfMode.Streaming) ?? "–"} | {pitfall.Optimized} |");
        }

        return md.ToString();
    }

    /// <summary>The names of the marked tables in <paramref name="markdown"/>.</summary>
    public static IReadOnlyList<string> Names(string markdown) => Marked().Matches(markdown).Select(m => m.Groups["name"].Value).ToList();

    public static string Render(BenchResult result, string name)
    {
        var md = new StringBuilder();
        switch (name.Split(' ', StringSplitOptions.RemoveEmptyEntries))
        {
            case ["headline"]:
                md.AppendLine("| scenario | in flight | p50 ms naive | p50 ms streaming | p50 ms optimized | p50 ms baseline | optimized / naive | optimized / baseline | peak working set optimized / naive |");
                md.AppendLine("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
                foreach (var (scenario, concurrency) in BenchReport.Groups(result))
                {
                    var (naive, streaming, optimized, baseline) = BenchReport.Modes(result, scenario, concurrency);
                    md.AppendLine(Invariant($"| {scenario} | {concurrency} | {Figures.Ms(naive?.P50Ms)} | {Figures.Ms(streaming?.P50Ms)} | {Figures.Ms(optimized?.P50Ms)} | {Figures.Ms(baseline?.P50Ms)} | {Figures.Ratio(optimized?.P50Ms, naive?.P50Ms)} | {Figures.Ratio(optimized?.P50Ms, baseline?.P50Ms)} | {Figures.Ratio(WorkingSet(optimized), WorkingSet(naive))} |"));
                }

                break;
            case ["targets"]:
                md.AppendLine("| target | ratio | measured | goal | met |");
                md.AppendLine("|---|---|---:|---:|---|");
                foreach (var t in result.Targets)
                {
                    md.AppendLine(Invariant($"| {t.Target} | {t.Comparison} | {Figures.Number(t.Measured)} | {(t.AtMost ? "≤" : "≥")} {t.Goal} | {t.Met switch { true => "yes", false => "**no**", null => "not measured" }} |"));
                }

                break;
            case ["figures", var scenario, var concurrency, .. var services]:
                BenchReport.AppendFigures(md, result, scenario, int.Parse(concurrency, System.Globalization.CultureInfo.InvariantCulture), services);
                break;
            case ["ladder", var scenario, var concurrency, var flag]:
                BenchLadder.Append(md, result, scenario, int.Parse(concurrency, System.Globalization.CultureInfo.InvariantCulture), flag);
                break;
            default:
                throw new ArgumentException($"Unknown bench table '{name}': use headline, targets, figures SCENARIO CONCURRENCY [SERVICE ...] or ladder SCENARIO CONCURRENCY FLAG.");
        }

        return md.ToString();
    }

    /// <summary>The Markdown files that may quote the report: README.md and everything under docs/.</summary>
    public static IEnumerable<string> Pages(string repositoryRoot) =>
        new[] { Path.Combine(repositoryRoot, "README.md") }
            .Concat(Directory.EnumerateFiles(Path.Combine(repositoryRoot, "docs"), "*.md", SearchOption.AllDirectories))
            .Where(p => !p.Contains(Path.Combine("docs", "results"), StringComparison.Ordinal));

    private static double? WorkingSet(PhaseResult? phase) => phase?.Services.Values.Sum(s => (double)s.PeakWorkingSetBytes);
}
