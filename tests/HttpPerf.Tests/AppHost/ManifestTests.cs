using System.Text.Json.Nodes;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.ServiceDefaults;
using Bench.LocalSystem;
using HttpPerf.Tests.Infrastructure;

namespace HttpPerf.Tests.AppHost;

/// <summary>
/// The deployment contract the AppHost publishes with core Aspire's manifest publisher, as a user runs it
/// (<c>aspire publish --publisher manifest</c> is this command): <c>AppHost --operation publish --publisher manifest</c>.
/// </summary>
[Collection(Lanes.Orchestrated)]
[Trait(Kind.Name, Kind.AppHost)]
public sealed class ManifestTests
{
    private static readonly string[] Projects = [.. SystemContract.Services.Select(s => s.Name), SystemContract.LoadGen];

    [Fact]
    public async Task The_published_manifest_keeps_flags_in_Redis_the_admin_key_secret_and_LoadGen_waiting()
    {
        var root = LocalSystem.RepositoryRoot();
        string? output = null;
        try
        {
            output = await AppHostPublish.RunAsync("manifest", "--publisher", "manifest");
            var text = await File.ReadAllTextAsync(Path.Combine(output, "aspire-manifest.json"), TestContext.Current.CancellationToken);
            var resources = JsonNode.Parse(text)!["resources"]!.AsObject();

            // Flags in Redis, given to every service as ConnectionStrings__flags; no flags file.
            Assert.Equal("container.v0", (string?)resources[SystemContract.FlagsConnectionName]!["type"]);
            Assert.StartsWith("docker.io/library/redis:", (string?)resources[SystemContract.FlagsConnectionName]!["image"]);
            foreach (var service in SystemContract.Services.Select(s => s.Name))
            {
                Assert.Equal("{flags.connectionString}", (string?)resources[service]!["env"]![SystemContract.FlagsConnectionString]);
            }

            foreach (var project in Projects)
            {
                Assert.False(resources[project]!["env"]!.AsObject().ContainsKey(SystemContract.FlagsFile), $"{project} has {SystemContract.FlagsFile}");
                Assert.False(Path.IsPathRooted((string?)resources[project]!["path"]), $"{project}: {resources[project]!["path"]}");
            }

            // Nothing of the publishing machine: no path of the checkout or of the user's home (the paths that are
            // there, /tmp/catalog and /data/uploads, are the containers').
            Assert.DoesNotContain(root, text, StringComparison.Ordinal);
            Assert.DoesNotContain(Environment.GetFolderPath(Environment.SpecialFolder.UserProfile) + "/", text, StringComparison.Ordinal);

            // The admin key a secret parameter the deployment must be given; the Gateway reads it, and does not let clients force modes.
            var adminKey = resources[SystemContract.AdminKeyParameter]!;
            Assert.Equal("parameter.v0", (string?)adminKey["type"]);
            Assert.True((bool?)adminKey["inputs"]!["value"]!["secret"]);
            Assert.Equal($"{{{SystemContract.AdminKeyParameter}.value}}", (string?)resources[SystemContract.Gateway]!["env"]![SystemContract.AdminKey]);
            Assert.Equal("false", (string?)resources[SystemContract.Gateway]!["env"]![SystemContract.AllowModeOverride]);

            // The replicas parameter, on every service but the Gateway; LoadGen waits to be started.
            Assert.Equal("parameter.v0", (string?)resources["replicas"]!["type"]);
            Assert.Equal("2", (string?)resources["replicas"]!["inputs"]!["value"]!["default"]!["value"]);
            foreach (var service in new[] { SystemContract.Catalog, SystemContract.Frontend, SystemContract.Uploads })
            {
                Assert.Equal("{replicas.value}", (string?)resources[service]!["replicas"]);
            }

            Assert.True((bool?)resources[SystemContract.LoadGen]!["explicitStart"]);
        }
        finally
        {
            AppHostPublish.Remove(output);
        }
    }
}
