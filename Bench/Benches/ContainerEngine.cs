using System.Diagnostics;
using System.Globalization;

namespace Bench.Benches;

/// <summary>
/// The container engine that runs the AppHost's containers (Podman or Docker, whichever holds them), through its own
/// command line, and each container's memory cgroup on this machine: what the kernel counts against the limit, and its
/// high-water mark, which root may reset between measurements (cgroup v1's <c>memory.max_usage_in_bytes</c>).
/// </summary>
internal sealed class ContainerEngine(string program)
{
    public string Program { get; } = program;

    /// <summary>The engine whose containers include <paramref name="container"/>: <c>ASPIRE_CONTAINER_RUNTIME</c>'s first, then Podman, then Docker.</summary>
    public static async Task<ContainerEngine> FindAsync(string container, CancellationToken cancellationToken)
    {
        var preferred = Environment.GetEnvironmentVariable("ASPIRE_CONTAINER_RUNTIME");
        foreach (var program in new[] { preferred, "podman", "docker" }.OfType<string>().Distinct())
        {
            try
            {
                var engine = new ContainerEngine(program);
                if ((await engine.RunAsync(["inspect", "--format", "{{.Id}}", container], cancellationToken)).Length > 0)
                {
                    return engine;
                }
            }
            catch (Exception error) when (error is InvalidOperationException or System.ComponentModel.Win32Exception)
            {
                // Not installed, or it does not hold the container.
            }
        }

        throw new InvalidOperationException($"No container engine (podman, docker) runs a container named {container}: is the AppHost in container mode?");
    }

    /// <summary>Runs the engine with <paramref name="arguments"/>; its output, trimmed; throws on a non-zero exit.</summary>
    public async Task<string> RunAsync(IEnumerable<string> arguments, CancellationToken cancellationToken)
    {
        var start = new ProcessStartInfo(Program) { RedirectStandardOutput = true, RedirectStandardError = true };
        foreach (var argument in arguments)
        {
            start.ArgumentList.Add(argument);
        }

        using var process = Process.Start(start) ?? throw new InvalidOperationException($"{Program} did not start");
        var output = process.StandardOutput.ReadToEndAsync(cancellationToken);
        var error = process.StandardError.ReadToEndAsync(cancellationToken);
        await process.WaitForExitAsync(cancellationToken);
        if (process.ExitCode != 0)
        {
            throw new InvalidOperationException($"{Program} {string.Join(' ', start.ArgumentList)}: {(await error).Trim()}");
        }

        return (await output).Trim();
    }

    /// <summary>What the engine says of <paramref name="container"/> now: its state, restarts so far, whether the kernel's OOM killer ended it.</summary>
    public async Task<ContainerState> InspectAsync(string container, CancellationToken cancellationToken)
    {
        var fields = (await RunAsync(["inspect", "--format", "{{.State.Status}} {{.RestartCount}} {{.State.OOMKilled}} {{.State.ExitCode}} {{.State.Pid}} {{.HostConfig.Memory}}", container], cancellationToken))
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
        var mapping = (await RunAsync(["port", container, $"{port}/tcp"], cancellationToken)).Split('\n')[0];
        return int.Parse(mapping[(mapping.LastIndexOf(':') + 1)..], CultureInfo.InvariantCulture);
    }

    /// <summary>
    /// The memory cgroup folder of the process <paramref name="pid"/> (a container's init) on this machine; null on
    /// cgroup v2 or where it cannot be read.
    /// </summary>
    public static string? MemoryCgroup(int pid)
    {
        try
        {
            var line = File.ReadLines($"/proc/{pid}/cgroup").FirstOrDefault(l => l.Split(':') is [_, var controllers, _] && controllers.Split(',').Contains("memory"));
            var folder = line is null ? null : Path.Combine("/sys/fs/cgroup/memory", line[(line.LastIndexOf(':') + 1)..].TrimStart('/'));
            return folder is not null && Directory.Exists(folder) ? folder : null;
        }
        catch (IOException)
        {
            return null;
        }
    }

    /// <summary>The cgroup's high-water mark in bytes, or null.</summary>
    public static long? PeakBytes(string? cgroup) =>
        cgroup is not null && File.Exists(Path.Combine(cgroup, "memory.max_usage_in_bytes"))
            ? long.Parse(File.ReadAllText(Path.Combine(cgroup, "memory.max_usage_in_bytes")).Trim(), CultureInfo.InvariantCulture)
            : null;

    /// <summary>Starts the cgroup's high-water mark again from what it holds now (root only); false where it cannot.</summary>
    public static bool ResetPeak(string? cgroup)
    {
        try
        {
            if (cgroup is null)
            {
                return false;
            }

            File.WriteAllText(Path.Combine(cgroup, "memory.max_usage_in_bytes"), "0");
            return true;
        }
        catch (Exception error) when (error is IOException or UnauthorizedAccessException)
        {
            return false;
        }
    }
}

/// <summary>A container as its engine reports it: <paramref name="MemoryLimit"/> is its <c>--memory</c> in bytes (0: none).</summary>
internal sealed record ContainerState(string Status, int Restarts, bool OomKilled, int ExitCode, int Pid, long MemoryLimit);
