using System.Diagnostics;

namespace HttpPerf.Tests.Containers;

/// <summary>
/// The container engine container mode runs on, asked through its own command line (<c>podman</c>, else
/// <c>docker</c>): whether one answers here, and what it holds.
/// </summary>
public static class ContainerEngine
{
    private static readonly Lazy<string?> Found = new(() => new[] { "podman", "docker" }.FirstOrDefault(Answers));

    /// <summary><c>podman</c> or <c>docker</c>, whichever answers; null where none does.</summary>
    public static string? Name => Found.Value;

    /// <summary>Why container mode cannot run here, or null when it can.</summary>
    public static string? Unavailable => Name is null
        ? "No container engine answers here (podman info, docker info): run eng/containers/setup.sh as root on Debian (docs/deploy.md)."
        : null;

    /// <summary>Whether <paramref name="engine"/> (<c>podman</c> or <c>docker</c>) is installed and its daemon or service answers.</summary>
    public static bool Answers(string engine) =>
        TryRun(engine, ["info", "--format", "{{.Host.Arch}}"], out _) || TryRun(engine, ["info", "--format", "{{.Architecture}}"], out _);

    /// <summary>Runs the engine's command; its standard output, or an exception that says what it printed.</summary>
    public static string Run(params string[] arguments) =>
        RunWith(Name ?? throw new InvalidOperationException(Unavailable), arguments);

    /// <summary><see cref="Run"/> on the engine named.</summary>
    public static string RunWith(string engine, params string[] arguments) =>
        TryRun(engine, arguments, out var output)
            ? output
            : throw new InvalidOperationException($"{engine} {string.Join(' ', arguments)} failed: {output}");

    private static bool TryRun(string program, IEnumerable<string> arguments, out string output)
    {
        var start = new ProcessStartInfo(program) { RedirectStandardOutput = true, RedirectStandardError = true };
        foreach (var argument in arguments)
        {
            start.ArgumentList.Add(argument);
        }

        try
        {
            using var process = Process.Start(start)!;
            var error = process.StandardError.ReadToEndAsync();
            output = process.StandardOutput.ReadToEnd();
            if (!process.WaitForExit(TimeSpan.FromSeconds(60)))
            {
                process.Kill(entireProcessTree: true);
                output = "timed out after 60 s";
                return false;
            }

            output += error.Result.Length > 0 && process.ExitCode != 0 ? error.Result : "";
            return process.ExitCode == 0;
        }
        catch (System.ComponentModel.Win32Exception exception)
        {
            output = exception.Message;
            return false;
        }
    }
}
