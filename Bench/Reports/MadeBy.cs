using System.Collections;
using System.Text;
using System.Text.RegularExpressions;

namespace Bench.Reports;

/// <summary>
/// How a report says what made it: under its title, the command that remakes it, and the machine and time it ran on.
/// Every bench says it the same way, so that a page quoting a report can show the very command (DocsTests holds
/// every page to its reports').
/// </summary>
public static partial class MadeBy
{
    /// <summary>
    /// What the services read from the environment they inherit from the bench, and so what a run depends on besides
    /// its arguments: configuration keys (<c>Frontend__Grpc__InitialStreamWindowSize</c>), the runtime's own settings
    /// (the GC's, <c>DOTNET_SYSTEM_*</c> switches, tiered compilation), and the engine Aspire runs containers on. Not
    /// what only the SDK reads (<c>DOTNET_CLI_*</c>, <c>DOTNET_NOLOGO</c>).
    /// </summary>
    [GeneratedRegex(@"^([A-Za-z][\w.]*__[\w.]+|DOTNET_(GC|SYSTEM_|TIERED|TC_|READYTORUN)\w*|ASPIRE_CONTAINER_RUNTIME)$", RegexOptions.IgnoreCase)]
    private static partial Regex Setting();

    /// <summary>Characters a shell takes as they are; an argument or value with any other is quoted.</summary>
    [GeneratedRegex(@"^[\w@%+=:,./-]+$")]
    private static partial Regex Plain();

    /// <summary>
    /// The command that remakes a report: <c>dotnet run</c> of Bench in the configuration it was built in, with
    /// <paramref name="arguments"/>, after the settings of this environment the run depended on, and after
    /// <c>sudo</c> where <paramref name="asRoot"/> says the run measured what only root can.
    /// </summary>
    public static string Command(IEnumerable<string> arguments, bool asRoot = false)
    {
        var settings = Environment.GetEnvironmentVariables().Cast<DictionaryEntry>()
            .Select(e => (Name: (string)e.Key, Value: (string?)e.Value ?? ""))
            .Where(e => Setting().IsMatch(e.Name))
            .OrderBy(e => e.Name, StringComparer.Ordinal)
            .Select(e => $"{e.Name}={Quote(e.Value)}");
        return string.Join(" ", [
            .. asRoot ? ["sudo"] : Array.Empty<string>(), .. settings,
            "dotnet", "run", "-c", LocalSystem.LocalSystem.CurrentConfiguration, "--project", "Bench", "--", .. arguments.Select(Quote)]);
    }

    /// <summary>A report's title, and under it the line that says what made it: <paramref name="command"/> on <paramref name="machine"/>, then <paramref name="details"/>.</summary>
    public static StringBuilder Heading(string title, string command, MachineInfo machine, string? details = null) =>
        new StringBuilder()
            .AppendLine($"# {title}")
            .AppendLine()
            .AppendLine(Invariant($"Made by `{command}` on {machine.Os}, {machine.Cores} cores, {machine.Runtime}, {machine.Started:yyyy-MM-dd HH:mm} UTC{(details is null ? "" : $": {details}")}."));

    /// <summary>A report as most benches write one: its <see cref="Heading"/>, a paragraph on what was measured and how, then its table.</summary>
    public static string Report(string title, string command, MachineInfo machine, string? details, string how, string table) =>
        Heading(title, command, machine, details).AppendLine(how).AppendLine().Append(table).ToString();

    /// <summary>The command in <paramref name="markdown"/>, a report: what its heading's backticks hold, or null.</summary>
    public static string? CommandIn(string markdown) => Quoted().Match(markdown) is { Success: true } m ? m.Groups["command"].Value : null;

    [GeneratedRegex(@"`(?<command>(sudo )?(\S+=\S+ )*dotnet run [^`]*)`")]
    private static partial Regex Quoted();

    private static string Quote(string text) => Plain().IsMatch(text) ? text : $"'{text.Replace("'", @"'\''", StringComparison.Ordinal)}'";
}
