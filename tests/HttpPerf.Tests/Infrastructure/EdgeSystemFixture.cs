using HttpPerf.ServiceDefaults.Contract;
using Bench.LocalSystem;

namespace HttpPerf.Tests.Infrastructure;

/// <summary>
/// The system as a deployment runs it at the edge: no mode override for anonymous clients, an admin key, a
/// storage quota of 1,000,000 bytes, and a Gateway that serves 2 proxied requests at once with no queue.
/// Headers must arrive within 3 s, so the slow-header test is quick.
/// </summary>
public sealed class EdgeSystemFixture : SharedSystem
{
    public const long MaxStoredBytes = 1_000_000;

    public string AdminKey { get; } = $"edge-admin-key-{Guid.NewGuid():N}";

    public LocalSystemOptions Options { get; private set; } = null!;

    public LocalSystem System { get; private set; } = null!;

    public HttpClient Gateway { get; private set; } = null!;

    protected override async Task StartAsync(CancellationToken cancel)
    {
        Options = new LocalSystemOptions
        {
            ProductCount = 2_000,
            AdminKey = AdminKey,
            AllowModeOverride = false,
            Environment = new Dictionary<string, string>
            {
                [SystemContract.UploadsMaxStoredBytes] = MaxStoredBytes.ToString(global::System.Globalization.CultureInfo.InvariantCulture),
                ["Gateway__MaxConcurrentRequests"] = "2",
                ["Gateway__MaxQueuedRequests"] = "0",
                ["HttpLimits__RequestHeadersTimeout"] = "00:00:03",
            },
        };
        System = await LocalSystem.StartAsync(Options, cancel);
        Gateway = new HttpClient { BaseAddress = System.Gateway.BaseAddress };
    }

    /// <summary>Stored uploads (a folder each, named by id).</summary>
    public int StoredFiles() => System.StoredUploads().Count;

    /// <summary>Waits until no pending upload, temp file or request remains, and <paramref name="stored"/> files are stored.</summary>
    public async Task AssertNothingLeftBehindAsync(int stored)
    {
        var deadline = DateTime.UtcNow.AddSeconds(10);
        while (true)
        {
            try
            {
                Assert.Empty(System.IncomingFiles());
                foreach (var service in System.Services)
                {
                    Assert.Empty(Directory.GetFiles(System.TempDirectory(service.Name), "*", SearchOption.AllDirectories));
                }

                Assert.Equal(stored, StoredFiles());
                return;
            }
            catch (Xunit.Sdk.XunitException) when (DateTime.UtcNow < deadline)
            {
                await Task.Delay(100, TestContext.Current.CancellationToken);
            }
        }
    }

    public async Task AssertEveryServiceHealthyAsync()
    {
        foreach (var service in System.Services)
        {
            using var client = new HttpClient { BaseAddress = service.BaseAddress };
            using var health = await client.GetAsync("/health", TestContext.Current.CancellationToken);
            Assert.True(health.IsSuccessStatusCode, $"{service.Name} answered {(int)health.StatusCode} on /health");
            Assert.False(service.HasExited, $"{service.Name} exited");
        }
    }

    protected override async ValueTask StopAsync()
    {
        Gateway?.Dispose();
        if (System is not null)
        {
            await System.DisposeAsync();
        }
    }
}
