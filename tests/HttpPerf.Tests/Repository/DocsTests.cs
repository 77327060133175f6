using System.Text.Json.Nodes;
using System.Text.RegularExpressions;
using Bench.Benches;
using Bench.Latency;
using Bench.Reports;
using Bench.LocalSystem;
using HttpPerf.Tests.Infrastructure;

namespace HttpPerf.Tests.Repository;

/// <summary>The README is a short door, and every figure it and docs/ quote is a committed report's.</summary>
[Trait(Kind.Name, Kind.Repository)]
public sealed class DocsTests
{
    private static readonly string Root = LocalSystem.RepositoryRoot();

    private static readonly string Results = Path.Combine(Root, "docs", "results");

    [Fact]
    public void Every_table_the_readme_and_docs_quote_matches_the_committed_report()
    {
        var reports = new CommittedReports(Results);
        var report = reports.Read<BenchResult>(ResultsFolders.Main);
        var quoted = 0;
        foreach (var page in BenchSnippets.Pages(Root))
        {
            var text = File.ReadAllText(page);
            quoted += BenchSnippets.Names(text).Count;
            // Rendering every marked table anew from the committed report.json files must change nothing (bench --update-docs).
            Assert.True(BenchSnippets.Update(text, reports) == text, $"{Path.GetRelativePath(Root, page)} quotes figures that differ from the committed reports under docs/results: run `dotnet run --project Bench -- bench --update-docs`.");
        }

        // Seed 003's table, at both round trips, from the committed `latency` report.
        var latency = reports.Read<LatencyResult>(ResultsFolders.Latency);
        Assert.Equal([100, 158], latency.Cases.Select(c => c.RoundTripMs).Distinct());
        Assert.Contains(LatencyReport.RenderSeedTable(latency), File.ReadAllText(Path.Combine(Root, "docs", "pitfalls", "Catalog.WriteStrategy.md")));

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
    public void Every_page_quoting_a_report_shows_the_command_that_made_it()
    {
        // So that a reader can make the figures again: the command as the report says it, sudo and settings included,
        // whole, as inline code (which may wrap) or as a line of a code block (which may end in a comment).
        var reports = new CommittedReports(Results);
        var missing = new List<string>();
        foreach (var page in BenchSnippets.Pages(Root))
        {
            var text = File.ReadAllText(page);
            var flat = Regex.Replace(text, @"\s+", " ");
            foreach (var (folder, report) in BenchSnippets.Quoted(text))
            {
                var command = MadeBy.CommandIn(reports.Markdown(folder, report));
                if (command is null || !(flat.Contains($"`{command}`", StringComparison.Ordinal)
                    || Regex.IsMatch(text, $@"^\s*{Regex.Escape(command)}(\s+#.*)?$", RegexOptions.Multiline)))
                {
                    missing.Add($"{Path.GetRelativePath(Root, page)} quotes docs/results/{folder}/{report}.md but not its command, `{command}`");
                }
            }
        }

        Assert.True(missing.Count == 0, string.Join('\n', missing));
    }

    [Fact]
    public async Task Every_committed_report_reads_back_whole()
    {
        // Each report.json under docs/results, read as its bench reads it and written again, still holds every figure it
        // held: none lost to a name or a shape the reader does not know (an older report gains what was added since).
        var reports = Directory.EnumerateFiles(Results, "*.json", SearchOption.AllDirectories).Order(StringComparer.Ordinal).ToList();
        var differ = new List<string>();
        foreach (var path in reports)
        {
            if (!await ReadsBackAsync(path))
            {
                differ.Add(Path.GetRelativePath(Root, path));
            }
        }

        Assert.True(differ.Count == 0, $"read and written again, these differ: {string.Join(", ", differ)}");
        Assert.True(reports.Count >= 20, $"{reports.Count} reports");
    }

    private static Task<bool> ReadsBackAsync(string path)
    {
        var folder = Path.GetDirectoryName(path)!;
        var report = Path.GetFileNameWithoutExtension(path);
        return (Path.GetFileName(folder), report) switch
        {
            (_, GcBench.Report) => ReadsBackAsync<IReadOnlyList<GcBench.Row>>(folder, report),
            (_, MemoryBench.SoakReport) => ReadsBackAsync<MemoryBench.Soak>(folder, report),
            (ResultsFolders.Memory, _) => ReadsBackAsync<MemoryBench.Result>(folder, report),
            (ResultsFolders.Latency, _) => ReadsBackAsync<LatencyResult>(folder, report),
            (ResultsFolders.Faults, _) => ReadsBackAsync<IReadOnlyList<FaultBench.Row>>(folder, report),
            (ResultsFolders.Protocols, _) => ReadsBackAsync<IReadOnlyList<ProtocolBench.Row>>(folder, report),
            (ResultsFolders.Blocking, _) => ReadsBackAsync<IReadOnlyList<BlockingBench.Row>>(folder, report),
            (var name, _) when name.StartsWith(ResultsFolders.Grpc, StringComparison.Ordinal) => ReadsBackAsync<IReadOnlyList<GrpcBench.Row>>(folder, report),
            (var name, _) when name.StartsWith(ResultsFolders.AsRun, StringComparison.Ordinal) => ReadsBackAsync<AsRunBench.Result>(folder, report),
            _ => ReadsBackAsync<BenchResult>(folder, report),
        };
    }

    private static async Task<bool> ReadsBackAsync<T>(string folder, string report)
    {
        var again = Directory.CreateTempSubdirectory("httpperf-report-").FullName;
        try
        {
            await ReportFiles.WriteAsync(again, report, ReportFiles.Read<T>(folder, report), "", TestContext.Current.CancellationToken);
            return Holds(JsonNode.Parse(File.ReadAllText(Path.Combine(folder, $"{report}.json"))), JsonNode.Parse(File.ReadAllText(Path.Combine(again, $"{report}.json"))));
        }
        finally
        {
            Directory.Delete(again, recursive: true);
        }
    }

    /// <summary>Whether <paramref name="written"/> has every property of <paramref name="read"/>, with the same value.</summary>
    private static bool Holds(JsonNode? read, JsonNode? written) => (read, written) switch
    {
        (JsonObject r, JsonObject w) => r.All(p => w.TryGetPropertyValue(p.Key, out var value) && Holds(p.Value, value)),
        (JsonArray r, JsonArray w) => r.Count == w.Count && r.Zip(w).All(p => Holds(p.First, p.Second)),
        _ => JsonNode.DeepEquals(read, written),
    };

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
