using System.Diagnostics;
using System.Globalization;
using Bench.LocalSystem;

namespace Bench.Containers;

/// <summary>
/// A container engine, Podman or Docker, through its own command line: the one wrapper the benches, the tests and the
/// AppHost's container mode (its image builds, the uploads volume, the containers' exits) run it through. Compiled into
/// the AppHost too (AppHost/SharedSource.props): plain .NET only. Its commands run as this process's user, as the
/// AppHost's own do: as root they reach rootful Podman's containers, as another user that user's rootless ones. A command
/// that has not ended within <see cref="CommandTimeout"/> is killed, and its failure says so; a failure names the
/// command and what the engine printed.
/// </summary>
/// <param name="program"><c>podman</c> or <c>docker</c>.</param>
/// <param name="commandTimeout">How long one command may take (<see cref="DefaultTimeout"/> unless given; <see cref="Timeout.InfiniteTimeSpan"/>: no limit).</param>
public sealed class ContainerEngine(string program, TimeSpan? commandTimeout = null)
{
    public static readonly TimeSpan DefaultTimeout = TimeSpan.FromSeconds(60);

    private static readonly Lazy<ContainerEngine?> FirstAnswering = new(() => Candidates().Select(name => new ContainerEngine(name)).FirstOrDefault(engine => engine.Answers()));

    public string Program { get; } = program;

    public TimeSpan CommandTimeout { get; } = commandTimeout ?? DefaultTimeout;

    /// <summary>The engines to look for, in turn: Aspire's own setting <c>ASPIRE_CONTAINER_RUNTIME</c> where it is set, then Podman, then Docker.</summary>
    public static IEnumerable<string> Candidates() =>
        new[] { Environment.GetEnvironmentVariable("ASPIRE_CONTAINER_RUNTIME"), "podman", "docker" }.OfType<string>().Distinct();

    /// <summary>The first of <see cref="Candidates"/> that <see cref="Answers"/> here (asked once); null where none does.</summary>
    public static ContainerEngine? Answering => FirstAnswering.Value;

    /// <summary>Whether it is installed and its daemon or service answers: <c>info</c>, with Podman's template, then Docker's.</summary>
    public bool Answers() => Succeeds(["info", "--format", "{{.Host.Arch}}"]) || Succeeds(["info", "--format", "{{.Architecture}}"]);

    /// <summary>Runs the engine with <paramref name="arguments"/>, whatever its exit: the caller reads how it ended.</summary>
    public Task<ProgramRun> TryRunAsync(IEnumerable<string> arguments, CancellationToken cancellationToken) =>
        ProgramRun.RunAsync(Program, arguments, CommandTimeout, cancellationToken);

    /// <summary>Runs the engine with <paramref name="arguments"/>: its output, trimmed; an <see cref="InvalidOperationException"/> that says what failed.</summary>
    public async Task<string> RunAsync(IEnumerable<string> arguments, CancellationToken cancellationToken) =>
        (await TryRunAsync(arguments, cancellationToken).ConfigureAwait(false)).EnsureSucceeded().Output.Trim();

    /// <summary><see cref="RunAsync"/>, waited for: for the tests' synchronous steps.</summary>
    public string Run(params string[] arguments) => Task.Run(() => RunAsync(arguments, CancellationToken.None)).GetAwaiter().GetResult();

    /// <summary>
    /// Freezes <paramref name="container"/> (<c>pause</c>). On cgroup v1 the kernel's freezer can give up while one of the
    /// container's tasks sits where it cannot be stopped (runc then thaws it again and says "unable to freeze"; seen once in
    /// 15 CI runs, under memory reclaim): that is tried again, up to 5 times half a second apart, and any other failure thrown.
    /// </summary>
    public async Task PauseAsync(string container, CancellationToken cancellationToken)
    {
        for (var attempt = 1; ; attempt++)
        {
            var run = await TryRunAsync(["pause", container], cancellationToken).ConfigureAwait(false);
            if (run.Succeeded || attempt == 5 || !run.Failure.Contains("unable to freeze", StringComparison.Ordinal))
            {
                run.EnsureSucceeded();
                return;
            }

            await Task.Delay(TimeSpan.FromMilliseconds(500), cancellationToken).ConfigureAwait(false);
        }
    }

    /// <summary>Starts a command that runs on (<c>events</c>): the caller reads its output as it comes, and ends it.</summary>
    public Process Start(IEnumerable<string> arguments) =>
        Process.Start(ProgramRun.StartInfo(Program, arguments)) ?? throw new InvalidOperationException($"{Program} did not start");

    /// <summary>The names of the containers it runs now.</summary>
    public async Task<IReadOnlyList<string>> ContainerNamesAsync(CancellationToken cancellationToken) =>
        (await RunAsync(["ps", "--format", "{{.Names}}"], cancellationToken).ConfigureAwait(false)).Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries);

    /// <summary>What the engine says of <paramref name="container"/> now: its state, restarts so far, whether the kernel's OOM killer ended it.</summary>
    public async Task<ContainerState> InspectAsync(string container, CancellationToken cancellationToken)
    {
        var fields = (await RunAsync(["inspect", "--format", "{{.State.Status}} {{.RestartCount}} {{.State.OOMKilled}} {{.State.ExitCode}} {{.State.Pid}} {{.HostConfig.Memory}}", container], cancellationToken).ConfigureAwait(false))
            .Split(' ', StringSplitOptions.RemoveEmptyEntries);
        return new ContainerState(
            fields[0],
            int.Parse(fields[1], CultureInfo.InvariantCulture),
            bool.Parse(fields[2]),
            int.Parse(fields[3], CultureInfo.InvariantCulture),
            int.Parse(fields[4], CultureInfo.InvariantCulture),
            long.Parse(fields[5], CultureInfo.InvariantCulture));
    }

    /// <summary>The host port where <paramref name="container"/>'s <paramref name="port"/>/tcp is published.</summary>
    public async Task<int> HostPortAsync(string container, int port, CancellationToken cancellationToken)
    {
        var mapping = (await RunAsync(["port", container, $"{port}/tcp"], cancellationToken).ConfigureAwait(false)).Split('\n')[0];
        return int.Parse(mapping[(mapping.LastIndexOf(':') + 1)..], CultureInfo.InvariantCulture);
    }

    private bool Succeeds(string[] arguments)
    {
        try
        {
            return Task.Run(() => TryRunAsync(arguments, CancellationToken.None)).GetAwaiter().GetResult().Succeeded;
        }
        catch (InvalidOperationException)
        {
            // Not installed.
            return false;
        }
    }
}

/// <summary>A container as its engine reports it: <paramref name="MemoryLimit"/> is its <c>--memory</c> in bytes (0: none).</summary>
public sealed record ContainerState(string Status, int Restarts, bool OomKilled, int ExitCode, int Pid, long MemoryLimit);
