using System.ComponentModel;
using System.Diagnostics;

namespace Bench.LocalSystem;

/// <summary>
/// A program run to its end, and what it printed: the one way Bench, the tests and the AppHost run a command line
/// (a container engine's, <c>dotnet publish</c>, <c>kill</c>). A run that outlasts its time limit, or is cancelled, is
/// killed with every process below it rather than left to run on unseen. Compiled into the AppHost too
/// (AppHost/SharedSource.props): plain .NET only.
/// </summary>
/// <param name="CommandLine">The program and its arguments, as a failure names them.</param>
/// <param name="TimedOutAfter">The time limit it outlasted (then it was killed, and <paramref name="ExitCode"/> is -1), or null.</param>
public sealed record ProgramRun(string CommandLine, int ExitCode, string Output, string Error, TimeSpan? TimedOutAfter = null)
{
    public bool Succeeded => ExitCode == 0 && TimedOutAfter is null;

    /// <summary>What went wrong, for an exception's message: the command line, how it ended, and what it printed.</summary>
    public string Failure => TimedOutAfter is { } limit
        ? $"{CommandLine} did not end within {limit.TotalSeconds:0} s and was killed"
        : $"{CommandLine} exited with {ExitCode}: {string.Join('\n', new[] { Output.Trim(), Error.Trim() }.Where(text => text.Length > 0))}";

    /// <summary>This run, or an <see cref="InvalidOperationException"/> that says <see cref="Failure"/>.</summary>
    public ProgramRun EnsureSucceeded() => Succeeded ? this : throw new InvalidOperationException(Failure);

    /// <summary>How <paramref name="program"/> is started: each argument as it is (no shell), its output and errors read.</summary>
    public static ProcessStartInfo StartInfo(string program, IEnumerable<string> arguments)
    {
        var start = new ProcessStartInfo(program) { RedirectStandardOutput = true, RedirectStandardError = true };
        foreach (var argument in arguments)
        {
            start.ArgumentList.Add(argument);
        }

        return start;
    }

    /// <summary>
    /// Runs <paramref name="program"/> until it ends or <paramref name="timeout"/> passes (<see cref="Timeout.InfiniteTimeSpan"/>:
    /// no limit); a cancelled run is killed and throws. A program that cannot start throws an
    /// <see cref="InvalidOperationException"/> that names it.
    /// </summary>
    public static async Task<ProgramRun> RunAsync(string program, IEnumerable<string> arguments, TimeSpan timeout, CancellationToken cancellationToken)
    {
        var start = StartInfo(program, arguments);
        var commandLine = $"{program} {string.Join(' ', start.ArgumentList)}";
        Process? started;
        try
        {
            started = Process.Start(start);
        }
        catch (Win32Exception notStarted)
        {
            throw new InvalidOperationException($"{commandLine}: {program} did not start ({notStarted.Message})", notStarted);
        }

        using var process = started ?? throw new InvalidOperationException($"{commandLine}: {program} did not start");
        var output = process.StandardOutput.ReadToEndAsync(CancellationToken.None);
        var error = process.StandardError.ReadToEndAsync(CancellationToken.None);
        using var limit = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        limit.CancelAfter(timeout);
        try
        {
            await process.WaitForExitAsync(limit.Token).ConfigureAwait(false);
        }
        catch (OperationCanceledException)
        {
            process.Kill(entireProcessTree: true);
            if (cancellationToken.IsCancellationRequested)
            {
                throw;
            }

            return new ProgramRun(commandLine, -1, "", "", timeout);
        }

        return new ProgramRun(commandLine, process.ExitCode, await output.ConfigureAwait(false), await error.ConfigureAwait(false));
    }
}
