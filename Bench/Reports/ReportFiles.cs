using System.Text.Json;
using System.Text.Json.Serialization;

namespace Bench.Reports;

/// <summary>
/// How every bench keeps a report: NAME.json with every figure, which the pages' tables are rendered from, and NAME.md
/// for people, side by side in one folder. One JSON shape for all of them (web names, enums by name, which also reads
/// enums written as numbers), so each committed report under docs/results reads back as it was written.
/// </summary>
public static class ReportFiles
{
    /// <summary>A bench's report, unless it keeps more than one in a folder (<c>bench --memory</c>: gc, soak).</summary>
    public const string Report = "report";

    private static readonly JsonSerializerOptions Json = new(JsonSerializerDefaults.Web)
    {
        WriteIndented = true,
        Converters = { new JsonStringEnumConverter() },
    };

    /// <summary>Writes <paramref name="figures"/> as NAME.json and <paramref name="markdown"/> as NAME.md into <paramref name="folder"/>, made if missing.</summary>
    public static async Task WriteAsync<T>(string folder, string name, T figures, string markdown, CancellationToken cancellationToken)
    {
        Directory.CreateDirectory(folder);
        await File.WriteAllTextAsync(Path.Combine(folder, $"{name}.json"), JsonSerializer.Serialize(figures, Json), cancellationToken);
        await File.WriteAllTextAsync(MarkdownPath(folder, name), markdown, cancellationToken);
    }

    /// <summary>The figures of NAME.json in <paramref name="folder"/>.</summary>
    public static T Read<T>(string folder, string name = Report)
    {
        var path = Path.Combine(folder, $"{name}.json");
        return JsonSerializer.Deserialize<T>(File.ReadAllText(path), Json) ?? throw new InvalidDataException($"{path} holds no report.");
    }

    /// <summary>Where NAME.md is in <paramref name="folder"/>.</summary>
    public static string MarkdownPath(string folder, string name = Report) => Path.Combine(folder, $"{name}.md");
}
