using System.Diagnostics;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.ServiceDefaults;
using HttpPerf.Tests.Infrastructure;

namespace HttpPerf.Tests.Containers;

/// <summary>
/// Container mode on Docker Engine, the engine most users have, beside the Podman tests: the same AppHost with
/// Aspire's own switch, <c>ASPIRE_CONTAINER_RUNTIME=docker</c>. It comes up (every container healthy), serves the
/// product list whole in both modes, takes a flip from the service's row on every replica, and stops clean.
/// eng/containers/setup.sh installs Debian's docker.io and starts <c>dockerd</c>, which nothing else starts here.
/// </summary>
[Trait(Kind.Name, Kind.Containers)]
public sealed class DockerEngineTests
{
    private static CancellationToken Cancel => TestContext.Current.CancellationToken;

    [Fact]
    public async Task Container_mode_on_Docker_comes_up_serves_whole_takes_a_flip_on_every_replica_and_stops_clean()
    {
        var system = new DockerModeFixture();
        Assert.SkipWhen(system.Unavailable is not null, system.Unavailable ?? "");
        IReadOnlyList<string> containers;
        try
        {
            await system.InitializeAsync();
            containers = [.. system.ContainerIds.Values];
            Assert.Equal(ContainerModeFixture.Containers.Count, containers.Count);
            Assert.All(containers, id => Assert.True(Exists(id), $"container {id} is not Docker's"));

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

        var clock = Stopwatch.StartNew();
        while (containers.Any(Exists) && clock.Elapsed < TimeSpan.FromSeconds(60))
        {
            await Task.Delay(500, Cancel);
        }

        Assert.DoesNotContain(containers, Exists);
    }

    private static bool Exists(string id) =>
        ContainerEngine.RunWith("docker", "ps", "-a", "-q", "--no-trunc", "--filter", $"id={id}").Trim().Length > 0;

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
