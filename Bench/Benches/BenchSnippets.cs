using Bench.Latency;
using System.Globalization;
using System.Text.RegularExpressions;
using System.Text;

namespace Bench.Benches;

/// <summary>
/// Figures that the README and docs/ quote, rendered from the committed reports under docs/results, so a page never
/// carries a number a report does not. A page marks each table with what it quotes:
/// <code>
/// &lt;!-- bench: headline --&gt;
/// ...table...
/// &lt;!-- /bench --&gt;
/// </code>
/// <c>bench: NAME</c> quotes <c>bench</c>'s report (docs/results/bench, or the folder NAME names last:
/// <c>... from uploads-100mib</c>): <c>headline</c> (the summary of every scenario), <c>targets</c>,
/// <c>figures SCENARIO CONCURRENCY [SERVICE ...]</c> (one scenario's figures, with those services' own), or
/// <c>ladder SCENARIO CONCURRENCY FLAG</c> (a lesson's rungs: <see cref="BenchLadder"/>). <c>latency</c> quotes seed
/// 003's table (<c>latency</c>); <c>faults</c>, <c>protocols</c>, <c>grpc</c>, <c>blocking</c> and <c>as-run</c> the tables of
/// <c>bench --faults</c>, <c>--protocols</c>, <c>--grpc</c>, <c>--blocking</c> and <c>--as-run</c>; <c>memory</c>, <c>memory: full</c>
/// and <c>memory: FLAG</c> what <see cref="MemoryBench.Quote"/> renders of <c>bench --memory</c>'s report, and
/// <c>memory: gc</c> and <c>memory: soak</c> the tables of <c>--memory --gc</c> and <c>--memory --soak</c>;
/// <c>pitfalls</c> the README's table of <see cref="Pitfalls.All"/>. <c>bench --update-docs</c> rewrites every
/// marked table from the committed reports; a test checks that doing so changes nothing, and that each page shows the
/// command its reports say made them.
/// </summary>
public static partial class BenchSnippets
{
    [GeneratedRegex(@"(?<open><!-- (?<kind>[a-z-]+)(: (?<name>[^>]+?))? -->\n)(?<body>.*?)(?<close><!-- /\k<kind> -->)", RegexOptions.Singleline)]
    private static partial Regex Marked();

    /// <summary><paramref name="markdown"/> with every marked table rendered anew from <paramref name="reports"/>.</summary>
    public static string Update(string markdown, CommittedReports reports) =>
        Marked().Replace(markdown, m => Render(m.Groups["kind"].Value, m.Groups["name"].Value, reports) is { } table
            ? m.Groups["open"].Value + table + m.Groups["close"].Value
            : m.Value);

    /// <summary>The reports the marked tables of <paramref name="markdown"/> quote: each one's folder under docs/results, and its name there.</summary>
    public static IReadOnlyList<(string Folder, string Report)> Quoted(string markdown) =>
        [.. Marked().Matches(markdown).Select(m => Source(m.Groups["kind"].Value, m.Groups["name"].Value)).OfType<(string, string)>().Distinct()];

    /// <summary>The names of the <c>bench</c> tables marked in <paramref name="markdown"/>.</summary>
    public static IReadOnlyList<string> Names(string markdown) =>
        [.. Marked().Matches(markdown).Where(m => m.Groups["kind"].Value == "bench").Select(m => m.Groups["name"].Value)];

    /// <summary>Whether <paramref name="markdown"/> has the pitfall table.</summary>
    public static bool HasPitfallTable(string markdown) => Marked().Matches(markdown).Any(m => m.Groups["kind"].Value == "pitfalls");

    /// <summary>Where a marker's table comes from: a report's folder and name, or null (the pitfall table, or a comment that is no marker of these).</summary>
    private static (string Folder, string Report)? Source(string kind, string name) => kind switch
    {
        "bench" => (BenchTable(name).Folder, ReportFiles.Report),
        "latency" => (ResultsFolders.Latency, ReportFiles.Report),
        "faults" => (ResultsFolders.Faults, ReportFiles.Report),
        "protocols" => (ResultsFolders.Protocols, ReportFiles.Report),
        "blocking" => (ResultsFolders.Blocking, ReportFiles.Report),
        "grpc" => (ResultsFolders.Grpc, ReportFiles.Report),
        "as-run" => (ResultsFolders.AsRun, ReportFiles.Report),
        "memory" => (ResultsFolders.Memory, name switch { "gc" => GcBench.Report, "soak" => MemoryBench.SoakReport, _ => ReportFiles.Report }),
        _ => null,
    };

    /// <summary>The table a marker quotes, rendered from its report; null for a comment that is no marker of these.</summary>
    private static string? Render(string kind, string name, CommittedReports reports)
    {
        if (kind == "pitfalls")
        {
            return RenderPitfalls();
        }

        if (Source(kind, name) is not ({ } folder, { } report))
        {
            return null;
        }

        T Read<T>()
            where T : notnull => reports.Read<T>(folder, report);
        return kind switch
        {
            "bench" => Render(Read<BenchResult>(), BenchTable(name).Table),
            "latency" => LatencyReport.RenderSeedTable(Read<LatencyResult>()),
            "faults" => FaultBench.Table(Read<IReadOnlyList<FaultBench.Row>>()),
            "protocols" => ProtocolBench.Table(Read<IReadOnlyList<ProtocolBench.Row>>()),
            "grpc" => GrpcBench.Table(Read<IReadOnlyList<GrpcBench.Row>>()),
            "blocking" => BlockingBench.Table(Read<IReadOnlyList<BlockingBench.Row>>()),
            "as-run" => AsRunBench.Tables(Read<AsRunBench.Result>()),
            _ => name switch
            {
                "gc" => GcBench.Table(Read<IReadOnlyList<GcBench.Row>>()),
                "soak" => MemoryBench.SoakTable(Read<MemoryBench.Soak>()),
                _ => MemoryBench.Quote(Read<MemoryBench.Result>(), name),
            },
        };
    }

    /// <summary>A <c>bench</c> marker's table, and the folder of the report it quotes.</summary>
    private static (string Table, string Folder) BenchTable(string name) =>
        name.Split(' ', StringSplitOptions.RemoveEmptyEntries) is [.. var table, "from", var folder] ? (string.Join(' ', table), folder) : (name, ResultsFolders.Main);

    /// <summary>The README's pitfall table: each flag, its service, and what each rung does, from <see cref="Pitfalls.All"/>.</summary>
    public static string RenderPitfalls() => MarkdownTable.Of(
        "| flag | service | naive | streaming | optimized |",
        "|---|---|---|---|---|",
        Pitfalls.All.Select(pitfall =>
            $"| [`{pitfall.Flag}`](docs/pitfalls/{pitfall.Flag}.md) | {BenchLadder.Hop(pitfall)} | {pitfall.Naive} | {pitfall.Describe(PerfMode.Streaming) ?? "–"} | {pitfall.Optimized} |"));

    /// <summary>The <c>bench</c> table <paramref name="name"/> of <paramref name="result"/>.</summary>
    public static string Render(BenchResult result, string name) => name.Split(' ', StringSplitOptions.RemoveEmptyEntries) switch
    {
        ["headline"] => MarkdownTable.Of(
            "| scenario | in flight | p50 ms naive | p50 ms streaming | p50 ms optimized | p50 ms baseline | optimized / naive | optimized / baseline | peak working set optimized / naive |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
            BenchReport.Groups(result).Select(group =>
            {
                var (naive, streaming, optimized, baseline) = BenchReport.Modes(result, group.Scenario, group.Concurrency);
                return Invariant($"| {group.Scenario} | {group.Concurrency} | {Figures.Ms(naive?.P50Ms)} | {Figures.Ms(streaming?.P50Ms)} | {Figures.Ms(optimized?.P50Ms)} | {Figures.Ms(baseline?.P50Ms)} | {Figures.Ratio(optimized?.P50Ms, naive?.P50Ms)} | {Figures.Ratio(optimized?.P50Ms, baseline?.P50Ms)} | {Figures.Ratio(WorkingSet(optimized), WorkingSet(naive))} |");
            })),
        ["targets"] => BenchReport.Targets(result),
        ["figures", var scenario, var concurrency, .. var services] =>
            Appended(md => BenchReport.AppendFigures(md, result, scenario, int.Parse(concurrency, CultureInfo.InvariantCulture), services)),
        ["ladder", var scenario, var concurrency, var flag] =>
            Appended(md => BenchLadder.Append(md, result, scenario, int.Parse(concurrency, CultureInfo.InvariantCulture), flag)),
        _ => throw new ArgumentException($"Unknown bench table '{name}': use headline, targets, figures SCENARIO CONCURRENCY [SERVICE ...] or ladder SCENARIO CONCURRENCY FLAG."),
    };

    /// <summary>The Markdown files that may quote the report: README.md and everything under docs/.</summary>
    public static IEnumerable<string> Pages(string repositoryRoot) =>
        new[] { Path.Combine(repositoryRoot, "README.md") }
            .Concat(Directory.EnumerateFiles(Path.Combine(repositoryRoot, "docs"), "*.md", SearchOption.AllDirectories))
            .Where(p => !p.Contains(Path.Combine("docs", "results"), StringComparison.Ordinal));

    private static string Appended(Action<StringBuilder> append)
    {
        var md = new StringBuilder();
        append(md);
        return md.ToString();
    }

    private static double? WorkingSet(PhaseResult? phase) => phase?.Services.Values.Sum(s => (double)s.PeakWorkingSetBytes);
}
