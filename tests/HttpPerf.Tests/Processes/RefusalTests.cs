using System.Globalization;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.Tests.Infrastructure;
using Bench.LocalSystem;

namespace HttpPerf.Tests.Processes;

/// <summary>
/// An upload refused mid-body reaches a paced client that reads while it sends (curl, at 2 MiB/s) through the
/// Gateway with the service's own status and problem, within 2 s of the moment the service refused, in every rung of
/// Uploads.Reader, whatever is left of the body (here a quarter of a GiB more, minutes at that pace, several times the
/// 60 s the service used to drain): the Gateway relays a body over HTTP/2 (Gateway.Upstream optimized), and the
/// client stops sending. With Gateway.Upstream naive (HTTP/1.1) the same refusal arrives as a 502.
/// A system of its own, shared by the class's tests (each sets its flags; a refused upload stores nothing): its quota
/// (6 MiB) and file limit (4 MiB) are this test's.
/// </summary>
[Collection(Lanes.Processes)]
[Trait(Kind.Name, Kind.Processes)]
[Lesson(Pitfalls.GatewayUpstream)]
public sealed class RefusalTests(RefusalTests.RefusalSystem fixture) : IClassFixture<RefusalTests.RefusalSystem>
{
    private const int MaxFileBytes = 4 * 1024 * 1024;
    private const int MaxStoredBytes = 6 * 1024 * 1024;
    private const long Rest = 256L * 1024 * 1024;
    private static readonly TimeSpan Promptly = TimeSpan.FromSeconds(2);

    private string Files => fixture.Files;

    private LocalSystem Processes => fixture.Processes;

    /// <summary>The client's pace: the rest of the body would take over two minutes.</summary>
    private const int MebibytesPerSecond = 2;

    public static TheoryData<string> Rungs => new(Pitfalls.Find(Pitfalls.UploadsReader)!.Variants.Select(v => v.Name));

    /// <summary>The services with this class's limits, and a folder for the files curl sends.</summary>
    public sealed class RefusalSystem : IAsyncLifetime
    {
        public string Files { get; } = Directory.CreateTempSubdirectory("httpperf-refusal-").FullName;

        public LocalSystem Processes { get; private set; } = null!;

        public async ValueTask InitializeAsync() =>
            Processes = await LocalSystem.StartAsync(new LocalSystemOptions
            {
                ProductCount = 100,
                Environment = new Dictionary<string, string>
                {
                    ["Uploads__MaxFileBytes"] = MaxFileBytes.ToString(CultureInfo.InvariantCulture),
                    [SystemContract.UploadsMaxStoredBytes] = MaxStoredBytes.ToString(CultureInfo.InvariantCulture),
                    ["Uploads__MinFreeDiskBytes"] = "0",
                },
            }, TestContext.Current.CancellationToken);

        public async ValueTask DisposeAsync()
        {
            if (Processes is not null)
            {
                await Processes.DisposeAsync();
            }

            Directory.Delete(Files, recursive: true);
        }
    }

    [Theory]
    [Lesson(Pitfalls.UploadsReader)]
    [MemberData(nameof(Rungs))]
    public async Task A_file_over_the_limit_gets_413_within_2_s_of_the_limit_crossed(string rung)
    {
        await ServeAsync(rung, PerfMode.Optimized);
        var total = MaxFileBytes + RestFor(rung);
        var answer = await PostAsync((Sparse("big.bin", total), "application/octet-stream"));
        AssertRefused(answer, 413, "larger than", RefusedAt(rung, MaxFileBytes, total), total);
    }

    [Theory]
    [Lesson(Pitfalls.UploadsReader)]
    [MemberData(nameof(Rungs))]
    public async Task A_refused_type_in_the_first_part_gets_415_within_2_s(string rung)
    {
        await ServeAsync(rung, PerfMode.Optimized);
        var script = Path.Combine(Files, "script.sh");
        await File.WriteAllTextAsync(script, "echo", TestContext.Current.CancellationToken);
        var rest = RestFor(rung);
        var answer = await PostAsync((script, "application/x-sh"), (Sparse("after.bin", rest), "application/octet-stream"));
        AssertRefused(answer, 415, "not accepted", RefusedAt(rung, 0, rest), rest);
    }

    [Theory]
    [Lesson(Pitfalls.UploadsReader)]
    [MemberData(nameof(Rungs))]
    public async Task An_upload_past_the_storage_quota_gets_507_within_2_s_of_the_quota_crossed(string rung)
    {
        await ServeAsync(rung, PerfMode.Optimized);
        // Two files: 3.5 MiB, within the file limit, then one that takes the request past the 6 MiB quota (for the
        // naive rung, which checks each file's size before it stores any, one within the file limit too).
        const int First = 7 * 512 * 1024;
        var second = RestFor(rung);
        var total = First + second;
        var answer = await PostAsync((Sparse("first.bin", First), "application/octet-stream"), (Sparse("second.bin", second), "application/octet-stream"));
        AssertRefused(answer, 507, "cannot be stored", RefusedAt(rung, MaxStoredBytes, total), total);
        Assert.Empty(Processes.StoredUploads());
        Assert.Empty(Processes.IncomingFiles());
    }

    [Fact]
    public async Task Relayed_over_HTTP_1_1_the_same_refusal_arrives_as_502()
    {
        // Gateway.Upstream naive: YARP's HttpClient sends the whole HTTP/1.1 body before it reads; the service answers
        // 413 and Kestrel, after a few seconds of draining what nobody reads, closes: the send fails, YARP says 502.
        await ServeAsync(PerfMode.Optimized, PerfMode.Naive);
        var answer = await PostAsync((Sparse("big.bin", MaxFileBytes + Rest), "application/octet-stream"));
        Assert.Equal(502, answer.Status);
    }

    // The naive rung reads the whole form before it looks at any file: its refusal comes at the end of the body, so
    // its body is kept short; the streaming rungs refuse as the bytes arrive, and the rest is a quarter of a GiB.
    private static long RestFor(string rung) => rung == PerfMode.Naive ? 4L * 1024 * 1024 : Rest;

    private static TimeSpan RefusedAt(string rung, long crossedAt, long total) =>
        TimeSpan.FromSeconds((double)(rung == PerfMode.Naive ? total : crossedAt) / (MebibytesPerSecond * 1024 * 1024));

    private static void AssertRefused(CurlUpload.Answer answer, int status, string title, TimeSpan refusedAt, long total)
    {
        var said = $"{answer.Status} '{answer.ProblemTitle}' after {answer.Elapsed.TotalSeconds:F1} s, {answer.BytesSent} of {total} bytes sent, curl {answer.ExitCode} {answer.Errors}";
        Assert.True(answer.Status == status, said);
        Assert.Equal("application/problem+json", answer.ContentType);
        Assert.Contains(title, answer.ProblemTitle, StringComparison.Ordinal);
        Assert.True(answer.Elapsed <= refusedAt + Promptly, $"refused at about {refusedAt.TotalSeconds:F1} s: {said}");
        Assert.True(answer.ExitCode == 0, $"the connection did not end cleanly: {said}");
    }

    private string Sparse(string name, long length) => CurlUpload.SparseFile(Files, name, length);

    private Task<CurlUpload.Answer> PostAsync(params (string Path, string ContentType)[] parts) =>
        CurlUpload.PostAsync(new Uri(Processes.Gateway.BaseAddress, "/api/uploads"), parts.Select(p => new CurlUpload.Part(p.Path, p.ContentType)),
            MebibytesPerSecond * 1024 * 1024, TestContext.Current.CancellationToken);

    private Task ServeAsync(string reader, string upstream) =>
        ServedFlags.SetAsync(Processes, new Dictionary<string, string> { [Pitfalls.UploadsReader] = reader, [Pitfalls.GatewayUpstream] = upstream });
}
