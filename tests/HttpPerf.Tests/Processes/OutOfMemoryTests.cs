using System.Net.Http.Json;
using System.Security.Cryptography;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.ServiceDefaults.Telemetry;
using HttpPerf.Tests.Infrastructure;
using Bench.LocalSystem;

namespace HttpPerf.Tests.Processes;

/// <summary>
/// A request that meets the GC heap's limit, as a service under a pod's memory limit does (docs/memory.md): every
/// service's heap held to 64 MiB (<c>DOTNET_GCHeapHardLimit</c>, the setting a container's limit sets to 75% of
/// itself), and a naive download of a 96 MiB file, which reads it whole into one array. The answer is a 503 with
/// <c>Retry-After</c> and a problem body, never a 500 or a hang; the Uploads log says once which route and rung ran
/// out; and the replica goes on serving, the same file whole by the optimized rung. Processes, not containers: the
/// heap's limit is the runtime's, whoever sets it, and no engine is needed to show it.
/// </summary>
[Collection(Lanes.Processes)]
[Trait(Kind.Name, Kind.Processes)]
[Lesson(Pitfalls.UploadsDownload)]
public sealed class OutOfMemoryTests : IAsyncLifetime
{
    private const long HeapLimit = 64L * 1024 * 1024;
    private LocalSystem? _system;

    public async ValueTask InitializeAsync() =>
        _system = await LocalSystem.StartAsync(new LocalSystemOptions
        {
            ProductCount = 100,
            Environment = new Dictionary<string, string> { ["DOTNET_GCHeapHardLimit"] = $"0x{HeapLimit:X}" },
        }, TestContext.Current.CancellationToken);

    public async ValueTask DisposeAsync()
    {
        if (_system is not null)
        {
            await _system.DisposeAsync();
        }
    }

    [Fact]
    public async Task A_download_that_outgrows_the_heap_limit_answers_503_with_Retry_After_logs_its_route_and_rung_once_and_the_replica_serves_on()
    {
        var cancel = TestContext.Current.CancellationToken;
        var system = _system!;
        using var gateway = new HttpClient { BaseAddress = system.Gateway.BaseAddress, Timeout = TimeSpan.FromSeconds(60) };
        var counters = await system.Uploads.ReadRuntimeCountersAsync(cancel);
        Assert.Equal(HeapLimit, counters.GcHeapLimitBytes);

        var file = EveryRung.RandomFile(96 * 1024 * 1024);
        var (receipt, _) = await EveryRung.UploadAsync(gateway, "/api/uploads", file, PerfMode.Optimized);
        await ServedFlags.SetAsync(system, new Dictionary<string, string> { [Pitfalls.UploadsDownload] = PerfMode.Naive });

        using var response = await gateway.GetAsync($"/api/uploads/{receipt.Id}", cancel);
        Assert.Equal(503, (int)response.StatusCode);
        Assert.Equal(TimeSpan.FromSeconds(2), response.Headers.RetryAfter?.Delta);
        Assert.Equal("application/problem+json", response.Content.Headers.ContentType?.MediaType);
        var problem = await response.Content.ReadFromJsonAsync<Http.ProblemDocument>(cancel);
        Assert.Equal(("Out of memory", 503), (problem?.Title, problem?.Status));
        Assert.Contains($"{Pitfalls.UploadsDownload}={PerfMode.Naive}", problem?.Detail, StringComparison.Ordinal);

        // One line, naming the route and the rung; not the exception handler's own error with its stack as well.
        var log = system.Uploads.RecentOutput;
        var lines = log.Split('\n').Where(l => l.Contains("Out of memory:", StringComparison.Ordinal)).ToList();
        Assert.True(lines.Count == 1, log);
        Assert.Contains($"GET /uploads/{{id}} served by {Pitfalls.UploadsDownload}={PerfMode.Naive} answered 503", lines[0], StringComparison.Ordinal);
        Assert.DoesNotContain("An unhandled exception has occurred", log, StringComparison.Ordinal);

        // The replica is not broken, only asked for more than it holds: the optimized rung streams the same file whole.
        await ServedFlags.SetAsync(system, new Dictionary<string, string> { [Pitfalls.UploadsDownload] = PerfMode.Optimized });
        var download = await Http.GetAsync(gateway, $"/api/uploads/{receipt.Id}");
        Assert.Equal(200, download.Status);
        Assert.Equal(Convert.ToHexStringLower(SHA256.HashData(file)), download.Sha256);
        Assert.False(system.Uploads.HasExited);
    }
}
