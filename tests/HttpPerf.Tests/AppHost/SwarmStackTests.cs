using System.Globalization;
using System.Text.RegularExpressions;
using HttpPerf.ServiceDefaults.Contract;
using Microsoft.AspNetCore.Builder;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Options;
using Bench.LocalSystem;
using HttpPerf.Tests.Infrastructure;

namespace HttpPerf.Tests.AppHost;

/// <summary>
/// The swarm stack the AppHost publishes (<c>aspire publish -o deploy/swarm</c> runs this step:
/// <c>AppHost --operation publish --step publish-swarm</c>): the committed deploy/swarm is what the model writes today,
/// and it keeps what a swarm across hosts needs (docs/deploy.md, "On a swarm").
/// </summary>
[Collection(Lanes.Orchestrated)]
[Trait(Kind.Name, Kind.AppHost)]
public sealed class SwarmStackTests
{
    [Fact]
    public async Task The_committed_stack_is_what_the_model_publishes_with_its_secrets_the_swarms()
    {
        var root = LocalSystem.RepositoryRoot();
        string? output = null;
        try
        {
            output = await AppHostPublish.RunAsync("swarm", "--step", "publish-swarm");
            foreach (var file in new[] { "stack.yml", "secrets.env" })
            {
                var published = await File.ReadAllTextAsync(Path.Combine(output, file), TestContext.Current.CancellationToken);
                var committed = await File.ReadAllTextAsync(Path.Combine(root, "deploy", "swarm", file), TestContext.Current.CancellationToken);
                Assert.True(published == committed, $"deploy/swarm/{file} is not what the AppHost publishes now: run `aspire publish -o deploy/swarm` (or AppHost --operation publish --step publish-swarm --output-path deploy/swarm) and commit it.");
            }

            var stack = await File.ReadAllTextAsync(Path.Combine(output, "stack.yml"), TestContext.Current.CancellationToken);
            var secrets = await File.ReadAllTextAsync(Path.Combine(output, "secrets.env"), TestContext.Current.CancellationToken);

            // The admin key and Redis's password are swarm secrets, made from the AppHost's secret parameters, never values of the file.
            Assert.Contains($"httpperf-{SystemContract.AdminKey}=${{ADMIN_KEY}}", secrets, StringComparison.Ordinal);
            Assert.Contains($"httpperf-{SystemContract.FlagsConnectionString}=flags:6379,password=${{FLAGS_PASSWORD}}", secrets, StringComparison.Ordinal);
            Assert.DoesNotContain("${ADMIN_KEY}", stack, StringComparison.Ordinal);
            // LoadGen has the key too, as a secret, so its A/B forces modes through the published Gateway.
            Assert.Contains($"httpperf-{SystemContract.LoadGenAdminKey}=${{ADMIN_KEY}}", secrets, StringComparison.Ordinal);
            Assert.Contains($"- source: {SystemContract.LoadGenAdminKey}", stack, StringComparison.Ordinal);
            Assert.DoesNotContain("password=", stack, StringComparison.Ordinal);
            Assert.Contains($"- source: {SystemContract.AdminKey}", stack, StringComparison.Ordinal);

            // Every service behind its own name with every replica's address (no virtual IP, no routing mesh), expanded by each caller.
            Assert.Equal(7, Count(stack, "endpoint_mode: dnsrr"));
            Assert.Equal(5, Count(stack, "ServiceDiscovery__ReplicaAddresses__Expand: \"true\""));
            // The Gateway on every node, on the node's own port 5100; the replicated services as the replicas parameter says.
            Assert.Contains("      published: 5100\n      protocol: tcp\n      mode: host", stack, StringComparison.Ordinal);
            Assert.Equal(1, Count(stack, "mode: global"));
            Assert.Equal(3, Count(stack, "replicas: ${REPLICAS:-2}"));
            Assert.Contains("services__catalog__http__0: http://catalog:8080", stack, StringComparison.Ordinal);
            // Uploads on a volume every node shares; the memory limits of container mode, each a variable an operator may set.
            Assert.Contains("- uploads-data:/data/uploads", stack, StringComparison.Ordinal);
            Assert.Equal(5, Regex.Matches(stack, @"memory: \$\{[A-Z]+_MEMORY:-256M\}").Count);
            Assert.Contains("memory: ${FRONTEND_MEMORY:-256M}", stack, StringComparison.Ordinal);
            // No Docker health check: each is an exec, 75 ms of CPU, most of what the swarm cost at rest. The Gateway on
            // every node probes every replica every 30 s, not 5 (docs/deploy.md, "The swarm at rest").
            Assert.DoesNotContain("healthcheck:", stack, StringComparison.Ordinal);
            Assert.Equal(1, Count(stack, $"{SystemContract.ProbeInterval}: 00:00:30"));
            // Every .NET service and the dashboard promote a method after 4 calls, not 30: an idle replica's rare code is
            // compiled in its first minutes, not a method at a time over its first half hour at rest.
            Assert.Equal(6, Count(stack, "DOTNET_TC_CallCountThreshold: \"4\""));
            // No path of the publishing machine.
            Assert.DoesNotContain(root, stack, StringComparison.Ordinal);
        }
        finally
        {
            AppHostPublish.Remove(output);
        }
    }

    [Fact]
    public void A_replica_told_to_stop_drains_for_as_long_as_the_stack_gives_its_host_within_the_swarms_grace()
    {
        var stack = File.ReadAllText(Path.Combine(LocalSystem.RepositoryRoot(), "deploy", "swarm", "stack.yml"));
        var timeouts = Regex.Matches(stack, $"{SystemContract.HostShutdownTimeoutSeconds}: \"(\\d+)\"").Select(m => int.Parse(m.Groups[1].Value, CultureInfo.InvariantCulture)).ToList();
        var graces = Regex.Matches(stack, "stop_grace_period: (\\d+)s").Select(m => int.Parse(m.Groups[1].Value, CultureInfo.InvariantCulture)).ToList();
        // Every .NET service: Catalog, Uploads, Frontend, the Gateway, LoadGen.
        Assert.Equal(5, timeouts.Count);
        Assert.Equal(5, graces.Count);
        Assert.Single(timeouts.Distinct());
        // A bound above the 30 to 50 s a product list's tail reached under 4 a second, and the swarm kills only after it.
        Assert.True(timeouts[0] >= 45, $"shutdownTimeoutSeconds {timeouts[0]}");
        Assert.All(graces, grace => Assert.True(grace > timeouts[0], $"stop_grace_period {grace}s, not above the host's {timeouts[0]} s"));

        // The key is the one the host reads its bound from (its configuration, environment variables included).
        var builder = WebApplication.CreateSlimBuilder(new WebApplicationOptions { Args = [$"--{SystemContract.HostShutdownTimeoutSeconds}={timeouts[0]}"] });
        using var app = builder.Build();
        Assert.Equal(TimeSpan.FromSeconds(timeouts[0]), app.Services.GetRequiredService<IOptions<HostOptions>>().Value.ShutdownTimeout);
    }

    private static int Count(string text, string part) => (text.Length - text.Replace(part, "", StringComparison.Ordinal).Length) / part.Length;
}
