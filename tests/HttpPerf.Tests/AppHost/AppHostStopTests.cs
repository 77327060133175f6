using System.Diagnostics;
using HttpPerf.Tests.Infrastructure;

namespace HttpPerf.Tests.AppHost;

/// <summary>Stopping the AppHost leaves nothing running: an instance of its own, since it ends it.</summary>
[Trait(Kind.Name, Kind.AppHost)]
public sealed class AppHostStopTests
{
    [Fact]
    public async Task Stopping_the_AppHost_leaves_no_service_process()
    {
        var system = new AppHostFixture();
        IReadOnlyList<int> processes;
        try
        {
            await system.InitializeAsync();
            processes = [.. system.ProcessIds.Values.SelectMany(ProcessTree.WithDescendants)];
            Assert.True(processes.Count >= 4, $"service processes found: {processes.Count}");
            Assert.All(processes, pid => Assert.True(ProcessTree.IsAlive(pid), $"{pid} runs"));
        }
        finally
        {
            await system.DisposeAsync();
        }

        var clock = Stopwatch.StartNew();
        while (processes.Any(ProcessTree.IsAlive) && clock.Elapsed < TimeSpan.FromSeconds(30))
        {
            await Task.Delay(250, TestContext.Current.CancellationToken);
        }

        Assert.DoesNotContain(processes, ProcessTree.IsAlive);
    }
}
