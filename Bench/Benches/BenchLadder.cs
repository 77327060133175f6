using System.Text;

namespace Bench.Benches;

/// <summary>
/// A lesson as measured steps, for the top of its pitfall page: each rung, what it changes (<see cref="Pitfalls.All"/>),
/// its lines of code (counted in the repository, so the table follows the code), its figures from the report, and
/// what the next rung buys for how many more lines.
/// </summary>
public static class BenchLadder
{
    /// <summary>The files that make each rung, by flag: the rung's class and the helpers only it uses.</summary>
    private static readonly Dictionary<string, Dictionary<string, string[]>> Code = new()
    {
        [Pitfalls.FrontendCatalogClient] = new()
        {
            [PerfMode.Naive] = ["Frontend.Api/CatalogClient/BufferedProductListWriter.cs"],
            [PerfMode.Streaming] = ["Frontend.Api/CatalogClient/StreamingProductListWriter.cs"],
            [PerfMode.Optimized] = ["Frontend.Api/CatalogClient/FieldByFieldProductListWriter.cs", "Frontend.Api/CatalogClient/CatalogProductReader.cs", "Frontend.Api/CatalogClient/ProductViewWriter.cs"],
        },
        [Pitfalls.CatalogSerialization] = new()
        {
            [PerfMode.Naive] = ["Catalog.Api/Serialization/NaiveCatalogWriter.cs"],
            [PerfMode.Streaming] = ["Catalog.Api/Serialization/StreamingCatalogWriter.cs"],
            [PerfMode.Optimized] = ["Catalog.Api/Serialization/FieldByFieldCatalogWriter.cs", "Catalog.Api/Data/ProductRows.cs"],
        },
        [Pitfalls.UploadsReader] = new()
        {
            [PerfMode.Naive] = ["Uploads.Api/Reader/FormFileUploadReader.cs"],
            [PerfMode.Streaming] = ["Uploads.Api/Reader/StreamingUploadReader.cs"],
            [PerfMode.Optimized] = ["Uploads.Api/Reader/PipeUploadReader.cs", "Uploads.Api/Reader/MultipartBodyParser.cs", "Uploads.Api/Reader/UploadFileWriter.cs", "Uploads.Api/Reader/DirectIo.cs"],
        },
    };

    /// <summary>The hop (the report's service name) that stages <paramref name="pitfall"/>.</summary>
    public static string Hop(Pitfall pitfall) => SystemContract.Spec(pitfall.Service).Project;

    public static void Append(StringBuilder md, BenchResult result, string scenario, int concurrency, string flag)
    {
        var pitfall = Pitfalls.Find(flag) ?? throw new ArgumentException($"Unknown flag '{flag}'.");
        var code = Code.GetValueOrDefault(flag) ?? throw new ArgumentException($"{flag} has no ladder: its rungs' files are not listed in BenchLadder.");
        var hop = Hop(pitfall);
        var root = LocalSystem.LocalSystem.RepositoryRoot();
        var rungs = pitfall.Variants
            .Select(v => (v.Name, v.Does, Code: code[v.Name], Lines: code[v.Name].Sum(f => CodeLines(Path.Combine(root, f))), Phase: result.Phases.Find(scenario, v.Name, concurrency)))
            .ToList();

        md.AppendLine(Invariant($"| rung | what it changes | lines of code | p50 ms | first byte p50 ms | {hop} CPU ms per request | {hop} allocated MB per request | {hop} peak working set MB | the next rung buys |"));
        md.AppendLine("|---|---|---:|---:|---:|---:|---:|---:|---|");
        for (var i = 0; i < rungs.Count; i++)
        {
            var (name, does, files, lines, phase) = rungs[i];
            var figures = phase?.Services.GetValueOrDefault(hop);
            var next = i + 1 < rungs.Count ? rungs[i + 1] : default;
            var buys = next.Name is null
                ? "–"
                : Invariant($"p50 ×{Figures.Ratio(next.Phase?.P50Ms, phase?.P50Ms)}, CPU ×{Figures.Ratio(Cpu(next.Phase, hop), figures?.CpuMsPerRequest)}, allocated ×{Figures.Ratio(Allocated(next.Phase, hop), figures?.AllocatedBytesPerRequest)}, {(next.Lines >= lines ? $"for {next.Lines - lines} more lines" : $"in {lines - next.Lines} fewer lines")}");
            md.AppendLine(Invariant($"| {name} | {does} | {lines} | {Figures.Ms(phase?.P50Ms)} | {Figures.Ms(phase?.FirstByteP50Ms)} | {Figures.Ms(figures?.CpuMsPerRequest)} | {Figures.Number(figures?.AllocatedBytesPerRequest / 1e6)} | {Figures.Number(figures?.PeakWorkingSetBytes / 1e6)} | {buys} |"));
        }
    }

    /// <summary>Lines that are code: not blank, not a comment, not a using or namespace line.</summary>
    public static int CodeLines(string file) => File.ReadLines(file)
        .Select(line => line.Trim())
        .Count(line => line.Length > 0 && !line.StartsWith("//", StringComparison.Ordinal)
            && !line.StartsWith("using ", StringComparison.Ordinal) && !line.StartsWith("namespace ", StringComparison.Ordinal));

    private static double? Cpu(PhaseResult? phase, string hop) => phase?.Services.GetValueOrDefault(hop)?.CpuMsPerRequest;

    private static double? Allocated(PhaseResult? phase, string hop) => phase?.Services.GetValueOrDefault(hop)?.AllocatedBytesPerRequest;
}
