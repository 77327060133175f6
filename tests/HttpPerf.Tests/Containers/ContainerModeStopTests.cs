using System.Diagnostics;
using HttpPerf.Tests.AppHost;
using HttpPerf.Tests.Infrastructure;

namespace HttpPerf.Tests.Containers;

/// <summary>Stopping the AppHost in container mode leaves no container, network or process: an instance of its own, since it ends it.</summary>
[Trait(Kind.Name, Kind.Containers)]
public sealed class ContainerModeStopTests
{
    [Fact]
    public async Task Stopping_the_AppHost_leaves_no_container_network_or_process()
    {
        Assert.SkipWhen(ContainerEngine.Unavailable is not null, ContainerEngine.Unavailable ?? "");
        var networksBefore = Networks();
        var system = new ContainerModeFixture();
        IReadOnlyList<string> containers;
        IReadOnlyList<string> networks;
        IReadOnlyList<int> processes;
        try
        {
            await system.InitializeAsync();
            containers = [.. system.ContainerIds.Values];
            networks = [.. Networks().Except(networksBefore)];
            // What this AppHost started here: DCP (which watches this process: --monitor <pid>) and the processes
            // below it, and the engine's monitor of each container (conmon, named with the container's id).
            processes = [.. Processes(cmdline => cmdline.Contains($"--monitor\0{Environment.ProcessId}\0", StringComparison.Ordinal)
                || containers.Any(id => cmdline.Contains(id, StringComparison.Ordinal)))
                .SelectMany(ProcessTree.WithDescendants).Distinct()];
            Assert.Equal(ContainerModeFixture.Containers.Count, containers.Count);
            Assert.Single(networks);
            Assert.NotEmpty(processes);
            Assert.All(containers, id => Assert.True(Exists(id), $"container {id} runs"));
        }
        finally
        {
            await system.DisposeAsync();
        }

        var clock = Stopwatch.StartNew();
        while ((containers.Any(Exists) || Networks().Intersect(networks).Any() || processes.Any(ProcessTree.IsAlive)) && clock.Elapsed < TimeSpan.FromSeconds(60))
        {
            await Task.Delay(500, TestContext.Current.CancellationToken);
        }

        Assert.DoesNotContain(containers, Exists);
        Assert.Empty(Networks().Intersect(networks));
        Assert.DoesNotContain(processes, ProcessTree.IsAlive);
    }

    private static IEnumerable<int> Processes(Func<string, bool> cmdline) =>
        Directory.EnumerateDirectories("/proc")
            .Select(directory => int.TryParse(Path.GetFileName(directory), out var pid) ? pid : 0)
            .Where(pid => pid > 0 && pid != Environment.ProcessId)
            .Where(pid =>
            {
                try
                {
                    return cmdline(File.ReadAllText($"/proc/{pid}/cmdline"));
                }
                catch (IOException)
                {
                    return false;
                }
            });

    private static string[] Networks() =>
        ContainerEngine.Run("network", "ls", "--format", "{{.Name}}").Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries);

    private static bool Exists(string id) =>
        ContainerEngine.Run("ps", "-a", "-q", "--no-trunc", "--filter", $"id={id}").Trim().Length > 0;
}
