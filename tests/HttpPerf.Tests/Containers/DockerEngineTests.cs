using System.Diagnostics;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.ServiceDefaults;
using HttpPerf.Tests.AppHost;
using HttpPerf.Tests.Infrastructure;

namespace HttpPerf.Tests.Containers;

/// <summary>
/// Container mode on Docker Engine, the engine most users have, beside the Podman tests: the same AppHost with
/// Aspire's own switch, <c>ASPIRE_CONTAINER_RUNTIME=docker</c>. It comes up (every container healthy), serves the
/// product list whole in both modes, takes a flip from the service's row on every replica, and stops clean: no
/// container, network or process left. The stop is checked here alone: the Podman tests share one system, and DCP
/// tears down on either engine the same way, so a second system started only to stop it proved nothing more.
/// eng/containers/setup.sh installs Debian's docker.io and starts <c>dockerd</c>, which nothing else starts here.
/// </summary>
[Trait(Kind.Name, Kind.Containers)]
public sealed class DockerEngineTests
{
    private static CancellationToken Cancel => TestContext.Current.CancellationToken;

    [Fact]
    public async Task Container_mode_on_Docker_comes_up_serves_whole_takes_a_flip_on_every_replica_and_stops_leaving_no_container_network_or_process()
    {
        var system = new DockerModeFixture();
        Assert.SkipWhen(system.Unavailable is not null, system.Unavailable ?? "");
        var networksBefore = Networks();
        IReadOnlyList<string> containers;
        IReadOnlyList<string> networks;
        IReadOnlyList<int> processes;
        try
        {
            await system.InitializeAsync();
            containers = [.. system.ContainerIds.Values];
            networks = [.. Networks().Except(networksBefore)];
            // What this AppHost started here: DCP (which watches this process: --monitor <pid>) and the processes
            // below it, and the engine's shim of each container (named with the container's id).
            processes = [.. ProcessTree.Matching(cmdline => cmdline.Contains($"--monitor\0{Environment.ProcessId}\0", StringComparison.Ordinal)
                || containers.Any(id => cmdline.Contains(id, StringComparison.Ordinal)))
                .SelectMany(ProcessTree.WithDescendants).Distinct()];
            Assert.Equal(ContainerModeFixture.Containers.Count, containers.Count);
            Assert.All(containers, id => Assert.True(Exists(id), $"container {id} is not Docker's"));
            Assert.Single(networks);
            Assert.NotEmpty(processes);

            var naive = await Http.GetAsync(system.Gateway, "/api/products", PerfMode.Naive);
            var optimized = await Http.GetAsync(system.Gateway, "/api/products", PerfMode.Optimized);
            Assert.Equal((200, 200), (naive.Status, optimized.Status));
            Assert.True(optimized.Body.Length > 100_000, $"{optimized.Body.Length} bytes");
            Assert.Equal(naive.Sha256, optimized.Sha256);

            var flip = await system.Commands.ExecuteCommandAsync(SystemContract.Catalog, $"{Pitfalls.CatalogSerialization}-{PerfMode.Naive}", Cancel);
            Assert.True(flip.Success, flip.Message);
            foreach (var replica in ContainerModeFixture.ReplicasOf(SystemContract.Catalog))
            {
                using var client = system.Replica(replica);
                var served = "";
                Assert.True(await Poll.UntilAsync(async () => (served = (await Http.GetAsync(client, "/catalog/products")).Variants).Contains($"{Pitfalls.CatalogSerialization}={PerfMode.Naive}", StringComparison.Ordinal),
                    TimeSpan.FromSeconds(5), TimeSpan.FromMilliseconds(100)), $"{replica} served {served}");
            }
        }
        finally
        {
            await system.DisposeAsync();
        }

        // Stopped: no container, network or process of this AppHost's is left.
        var clock = Stopwatch.StartNew();
        while ((containers.Any(Exists) || Networks().Intersect(networks).Any() || processes.Any(ProcessTree.IsAlive)) && clock.Elapsed < TimeSpan.FromSeconds(60))
        {
            await Task.Delay(500, Cancel);
        }

        Assert.DoesNotContain(containers, Exists);
        Assert.Empty(Networks().Intersect(networks));
        Assert.DoesNotContain(processes, ProcessTree.IsAlive);
    }

    private static bool Exists(string id) =>
        ContainerEngine.RunWith("docker", "ps", "-a", "-q", "--no-trunc", "--filter", $"id={id}").Trim().Length > 0;

    private static string[] Networks() =>
        ContainerEngine.RunWith("docker", "network", "ls", "--format", "{{.Name}}").Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries);

    /// <summary>The container-mode fixture on Docker Engine, whichever engine the machine's settings name.</summary>
    private sealed class DockerModeFixture : ContainerModeFixture
    {
        public override string? Engine => "docker";

        public override string? Unavailable => ContainerEngine.Answers("docker")
            ? null
            : "Docker Engine does not answer here (docker info): run eng/containers/setup.sh as root on Debian, which installs docker.io and starts dockerd (docs/deploy.md).";

        protected override IEnumerable<string> Settings => ["--ASPIRE_CONTAINER_RUNTIME=docker"];
    }
}
