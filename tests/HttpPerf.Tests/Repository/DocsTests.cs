using Bench.Benches;
using Bench.Reports;
using Bench.LocalSystem;
using HttpPerf.Tests.Infrastructure;

namespace HttpPerf.Tests.Repository;

/// <summary>The README is a short door, and every figure it and docs/ quote is a committed report's.</summary>
[Trait(Kind.Name, Kind.Repository)]
public sealed class DocsTests
{
    private static readonly string Root = LocalSystem.RepositoryRoot();

    [Fact]
    public void Every_table_the_readme_and_docs_quote_matches_the_committed_report()
    {
        var reports = BenchSnippets.Reports(Path.Combine(Root, "docs", "results"));
        var report = reports(BenchSnippets.MainResults);
        var quoted = 0;
        foreach (var page in BenchSnippets.Pages(Root))
        {
            var text = File.ReadAllText(page);
            quoted += BenchSnippets.Names(text).Count;
            // Rendering every marked table anew from the committed report.json files must change nothing (bench --update-docs).
            Assert.True(BenchSnippets.Update(text, reports, () => Bench.Latency.LatencyResult.Read(Path.Combine(Root, "docs", "results", BenchSnippets.LatencyResults)),
                () => FaultBench.Read(Path.Combine(Root, "docs", "results", FaultBench.Results)),
                () => ProtocolBench.Read(Path.Combine(Root, "docs", "results", ProtocolBench.Results)),
                () => AsRunBench.Read(Path.Combine(Root, "docs", "results", AsRunBench.Results)),
                MemoryBench.Renderer(Path.Combine(Root, "docs", "results", MemoryBench.Results)),
                () => GrpcBench.Read(Path.Combine(Root, "docs", "results", GrpcBench.Results))) == text, $"{Path.GetRelativePath(Root, page)} quotes figures that differ from the committed reports under docs/results: run `dotnet run --project Bench -- bench --update-docs`.");
        }

        // Seed 003's table, at both round trips, from the committed `latency` report.
        var latency = Bench.Latency.LatencyResult.Read(Path.Combine(Root, "docs", "results", BenchSnippets.LatencyResults));
        Assert.Equal([100, 158], latency.Cases.Select(c => c.RoundTripMs).Distinct());
        Assert.Contains(Bench.Latency.LatencyReport.RenderSeedTable(latency), File.ReadAllText(Path.Combine(Root, "docs", "pitfalls", "Catalog.WriteStrategy.md")));

        var readme = File.ReadAllText(Path.Combine(Root, "README.md"));
        Assert.Contains("headline", BenchSnippets.Names(readme));
        Assert.Contains(BenchSnippets.Render(report, "headline"), readme);
        Assert.Contains("| products | 1 |", readme);
        // The pitfall table is Pitfalls.All's (the landing and admin pages read the same list through /live and /admin/flags).
        Assert.True(BenchSnippets.HasPitfallTable(readme), "README.md has no <!-- pitfalls --> table");
        Assert.Contains(BenchSnippets.RenderPitfalls(), readme);
        Assert.Contains("| streaming |", BenchSnippets.RenderPitfalls());
        Assert.True(quoted >= 10, $"{quoted} quoted tables");
    }

    [Fact]
    public void The_readme_is_a_short_door_linking_a_page_per_pitfall()
    {
        var readme = File.ReadAllText(Path.Combine(Root, "README.md"));

        Assert.True(new FileInfo(Path.Combine(Root, "README.md")).Length <= 15_000, "README.md is over 15,000 bytes");
        Assert.Contains("```mermaid", readme);
        // The two commands: the system in Release (what the bench measures), and the tests CI runs.
        Assert.Contains("dotnet run -c Release --project AppHost", readme);
        Assert.Contains("dotnet test HttpPerf.slnx", readme);
        Assert.Contains("dotnet test HttpPerf.slnx", File.ReadAllText(Path.Combine(Root, ".ci", "run")));
        foreach (var pitfall in HttpPerf.ServiceDefaults.Contract.Pitfalls.All)
        {
            var page = Path.Combine(Root, "docs", "pitfalls", $"{pitfall.Flag}.md");
            Assert.True(File.Exists(page), $"no page for {pitfall.Flag}");
            Assert.Contains($"](docs/pitfalls/{pitfall.Flag}.md)", readme);
            Assert.Contains(pitfall.Flag, File.ReadAllText(page));
        }
    }

    [Fact]
    public void No_page_or_comment_cites_an_issue_number_for_what_it_means()
    {
        // "As issue NN asks" tells a reader of a copy of this repository nothing: a page says what it means instead.
        var citing = new System.Text.RegularExpressions.Regex(@"\bissues?\s+#?\d+", System.Text.RegularExpressions.RegexOptions.IgnoreCase);
        string[] skipped = ["bin", "obj", ".git", "node_modules"];
        // The tree's own files: build output and .git are not entered at all.
        var files = new System.IO.Enumeration.FileSystemEnumerable<string>(Root, (ref System.IO.Enumeration.FileSystemEntry entry) => entry.ToFullPath(),
            new EnumerationOptions { RecurseSubdirectories = true })
        {
            ShouldRecursePredicate = (ref System.IO.Enumeration.FileSystemEntry entry) => !skipped.Contains(entry.FileName.ToString()),
            ShouldIncludePredicate = (ref System.IO.Enumeration.FileSystemEntry entry) => !entry.IsDirectory
                && Path.GetExtension(entry.FileName) is ".md" or ".cs" or ".sh" or ".props" or ".targets" or ".json",
        };
        var found = files
            .SelectMany(file => File.ReadLines(file).Select((line, i) => (file, line, number: i + 1)))
            .Where(l => citing.IsMatch(l.line))
            .Select(l => $"{Path.GetRelativePath(Root, l.file)}:{l.number}: {l.line.Trim()}")
            .ToList();
        Assert.True(found.Count == 0, string.Join('\n', found));
    }
}
