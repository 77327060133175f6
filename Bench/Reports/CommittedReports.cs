namespace Bench.Reports;

/// <summary>The committed reports under <paramref name="root"/> (docs/results), each read once, when first asked for.</summary>
public sealed class CommittedReports(string root)
{
    private readonly Dictionary<string, object> _read = [];

    /// <summary>The figures of REPORT.json in <paramref name="folder"/> under the root.</summary>
    public T Read<T>(string folder, string report = ReportFiles.Report)
        where T : notnull
    {
        var path = Path.Combine(root, folder);
        if (!_read.TryGetValue(Path.Combine(path, report), out var figures))
        {
            _read[Path.Combine(path, report)] = figures = ReportFiles.Read<T>(path, report);
        }

        return (T)figures;
    }

    /// <summary>The Markdown of REPORT.md in <paramref name="folder"/> under the root.</summary>
    public string Markdown(string folder, string report = ReportFiles.Report) => File.ReadAllText(ReportFiles.MarkdownPath(Path.Combine(root, folder), report));
}
