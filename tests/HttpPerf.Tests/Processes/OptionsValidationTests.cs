using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.Tests.Infrastructure;
using Bench.LocalSystem;

namespace HttpPerf.Tests.Processes;

/// <summary>
/// Options are validated at start (<c>ValidateOnStart</c>): a service given a value that would break it does not start
/// and serve wrongly later; it exits at once, and its output names the key and what a good value is.
/// </summary>
[Collection(Lanes.Processes)]
[Trait(Kind.Name, Kind.Processes)]
public sealed class OptionsValidationTests
{
    [Theory]
    [InlineData("Catalog.Api", SystemContract.CatalogProductCount, "0", "Catalog:ProductCount must be positive")]
    [InlineData("Uploads.Api", SystemContract.UploadsMaxStoredBytes, "0", "Uploads:MaxStoredBytes must be positive")]
    [InlineData("Gateway", SystemContract.GatewaySection + "__MaxConcurrentRequests", "0", "Gateway:MaxConcurrentRequests must be positive")]
    [InlineData("Gateway", SystemContract.ProbeInterval, "00:00:00", "Gateway:ProbeInterval must be positive")]
    [InlineData("Frontend.Api", SystemContract.PooledConnectionLifetime, "00:00:00", "HttpClients:PooledConnectionLifetime must be positive")]
    public async Task A_service_given_a_value_that_would_break_it_exits_at_start_naming_the_key(string project, string key, string value, string message)
    {
        var work = Directory.CreateTempSubdirectory("httpperf-options-").FullName;
        try
        {
            var environment = new Dictionary<string, string>
            {
                [key] = value,
                [SystemContract.CatalogDataDirectory] = Path.Combine(work, "catalog"),
                [SystemContract.UploadsDataDirectory] = Path.Combine(work, "uploads"),
            };
            var refused = await Assert.ThrowsAsync<InvalidOperationException>(() =>
                ServiceProcess.StartAsync(project, LocalSystem.AssemblyPath(project, LocalSystem.CurrentConfiguration), environment, TestContext.Current.CancellationToken));

            Assert.Contains("exited with code", refused.Message, StringComparison.Ordinal);
            Assert.Contains(message, refused.Message, StringComparison.Ordinal);
        }
        finally
        {
            Directory.Delete(work, recursive: true);
        }
    }
}
