using System.Net.Http.Json;
using System.Security.Cryptography;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.ServiceDefaults.Telemetry;
using HttpPerf.Tests.Infrastructure;
using Bench.LocalSystem;

namespace HttpPerf.Tests.Processes;

/// <summary>
/// A request that would take the GC heap to its limit, as a service under a pod's memory limit does (docs/memory.md):
/// every service's heap held to 128 MiB (<c>DOTNET_GCHeapHardLimit</c>, the setting container mode gives as 50% of the
/// container's limit), and each replica's MemoryBudget (half of it, 64 MiB here), which a naive rung asks before it
/// holds a body whole. A naive download of a 144 MiB file (asked twice over: the array, and its copy in Kestrel's
/// output buffers) is answered 503 with <c>Retry-After</c> and a problem body, never a 500 or a hang; the Uploads log
/// says once which route and rung ran out; and the replica goes on serving, the same file whole by the optimized rung.
/// A second body held whole while the first holds it is refused the same way, and the budget is given back. Processes,
/// not containers: the heap's limit is the runtime's, whoever sets it, and no engine is needed to show it. What the
/// heap itself refuses (the naive product list asks nothing) is DockerEngineTests' case.
/// </summary>
[Collection(Lanes.Processes)]
[Trait(Kind.Name, Kind.Processes)]
[Lesson(Pitfalls.UploadsDownload)]
public sealed class OutOfMemoryTests : IAsyncLifetime
{
    private const long HeapLimit = 128L * 1024 * 1024;
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
    public async Task A_download_its_replica_cannot_hold_answers_503_with_Retry_After_logs_its_route_and_rung_once_and_the_replica_serves_on()
    {
        var cancel = TestContext.Current.CancellationToken;
        var system = _system!;
        using var gateway = new HttpClient { BaseAddress = system.Gateway.BaseAddress, Timeout = TimeSpan.FromSeconds(60) };
        var counters = await system.Uploads.ReadRuntimeCountersAsync(cancel);
        Assert.Equal(HeapLimit, counters.GcHeapLimitBytes);

        var file = EveryRung.RandomFile(144 * 1024 * 1024);
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

    [Fact]
    public async Task A_second_naive_download_the_budget_cannot_hold_beside_the_first_is_refused_503_and_the_first_is_served_whole()
    {
        // 20 MiB, asked twice over (the array, and its copy in Kestrel's output buffers): one fits in the Uploads replica's
        // 64 MiB budget, two do not. Straight to the replica, so that far less than 20 MiB fits in the buffers between it
        // and the client that does not read.
        using var uploads = new HttpClient { BaseAddress = _system!.Uploads.BaseAddress, Timeout = TimeSpan.FromSeconds(60) };
        await AssertSecondRefusedAsync(Pitfalls.UploadsDownload, 20, uploads, "/uploads/",
            "Refused: the file read whole and copied into Kestrel's output buffers would hold 40 MiB, beside the 40 MiB this replica's requests hold of the 64 MiB they may.");
        Assert.False(_system.Uploads.HasExited);
    }

    [Fact]
    public async Task The_Gateway_buffering_a_response_the_budget_cannot_hold_beside_another_refuses_it_503_before_it_begins()
    {
        // 20 MiB, which the naive Gateway captures in a buffer grown as MemoryStream grows one, to 32 MiB (holding the old
        // 16 MiB beside it while it copies): a second capture fits beside it up to 16 MiB, not through its growth to 32.
        using var gateway = new HttpClient { BaseAddress = _system!.Gateway.BaseAddress, Timeout = TimeSpan.FromSeconds(60) };
        await AssertSecondRefusedAsync(Pitfalls.GatewayBuffering, 20, gateway, "/api/uploads/", "Refused: the response captured whole would hold");
        Assert.False(_system.Gateway.HasExited);
    }

    // A file of `mib` MiB stored, `flag` naive: a first download read no further than its headers (so what it holds stays
    // held while its body waits on the socket), a second refused by the budget with `refusal`, the first whole after, and
    // the budget given back once it is done (the next one served).
    private async Task AssertSecondRefusedAsync(string flag, int mib, HttpClient client, string path, string refusal)
    {
        var cancel = TestContext.Current.CancellationToken;
        var system = _system!;
        using var gateway = new HttpClient { BaseAddress = system.Gateway.BaseAddress, Timeout = TimeSpan.FromSeconds(60) };
        var file = EveryRung.RandomFile(mib * 1024 * 1024);
        var (receipt, _) = await EveryRung.UploadAsync(gateway, "/api/uploads", file, PerfMode.Optimized);
        await ServedFlags.SetAsync(system, new Dictionary<string, string> { [flag] = PerfMode.Naive });
        try
        {
            using var first = await client.GetAsync(path + receipt.Id, HttpCompletionOption.ResponseHeadersRead, cancel);
            Assert.Equal(200, (int)first.StatusCode);

            using var second = await client.GetAsync(path + receipt.Id, cancel);
            var problem = await second.Content.ReadFromJsonAsync<Http.ProblemDocument>(cancel);
            Assert.True((int)second.StatusCode == 503 && second.Headers.RetryAfter?.Delta == TimeSpan.FromSeconds(2), $"{(int)second.StatusCode}: {problem?.Detail}");
            Assert.Equal("Out of memory", problem?.Title);
            Assert.StartsWith(refusal, problem?.Detail, StringComparison.Ordinal);

            Assert.Equal(Convert.ToHexStringLower(SHA256.HashData(file)), Convert.ToHexStringLower(SHA256.HashData(await first.Content.ReadAsByteArrayAsync(cancel))));
            first.Dispose();
            Assert.True(await Poll.UntilAsync(async () => (await Http.GetAsync(client, path + receipt.Id)).Status == 200, TimeSpan.FromSeconds(10), TimeSpan.FromMilliseconds(200)),
                "the budget was not given back after the first download");
        }
        finally
        {
            await ServedFlags.SetAsync(system, new Dictionary<string, string> { [flag] = PerfMode.Optimized });
        }
    }
}
