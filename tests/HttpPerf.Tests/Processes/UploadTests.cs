using System.Net.Http.Headers;
using System.Net.Http.Json;
using System.Net;
using System.Security.Cryptography;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.Tests.Infrastructure;

namespace HttpPerf.Tests.Processes;

/// <summary>Uploads.Api through the Gateway, in every rung of <c>Uploads.Reader</c> and both of <c>Uploads.Download</c>.</summary>
[Collection(Lanes.Processes)]
[Trait(Kind.Name, Kind.Processes)]
public sealed class UploadTests(SmallSystemFixture fixture) : SystemTests<SmallSystemFixture>(fixture)
{
    public static TheoryData<string> Modes => new() { "naive", "streaming", "optimized" };

    public static TheoryData<string> GatewayModes => new() { "naive", "optimized" };

    [Theory]
    [Lesson(Pitfalls.UploadsReader)]
    [Lesson(Pitfalls.UploadsDownload)]
    [MemberData(nameof(Modes))]
    public async Task An_upload_round_trips_its_sha256_in_both_download_modes(string mode)
    {
        var bytes = RandomNumberGenerator.GetBytes(3 * 1024 * 1024 + 17);
        using var form = new MultipartFormDataContent { { new ByteArrayContent(bytes), "file", "report.bin" } };

        var (response, receipts) = await UploadAsync(form, mode);

        Assert.Equal(HttpStatusCode.Created, response.StatusCode);
        Assert.Equal($"Gateway.Buffering={GatewayServing(mode)}, Gateway.Upstream={GatewayServing(mode)}, Uploads.Reader={mode}", string.Join(", ", response.Headers.GetValues("X-Perf-Variants")));
        var receipt = Assert.Single(receipts);
        Assert.Equal(bytes.Length, receipt.Size);
        Assert.Equal(Sha256(bytes), receipt.Sha256);
        Assert.Equal("report.bin", receipt.FileName);
        Assert.Equal($"/uploads/{receipt.Id}", response.Headers.Location?.OriginalString);

        foreach (var downloadMode in new[] { "naive", "optimized" })
        {
            var stored = await Http.GetAsync(Fixture.Gateway, $"/api/uploads/{receipt.Id}", downloadMode);
            Assert.Equal(200, stored.Status);
            Assert.Equal($"Gateway.Buffering={downloadMode}, Gateway.Upstream={downloadMode}, Uploads.Download={downloadMode}", stored.Variants);
            Assert.Equal(receipt.Sha256, stored.Sha256);
        }

        await AssertNothingLeftBehindAsync();
    }

    [Fact]
    [Lesson(Pitfalls.UploadsReader)]
    public async Task Every_rung_stores_the_same_bytes_under_the_same_sha256()
    {
        var bytes = RandomNumberGenerator.GetBytes(2 * 1024 * 1024 + 5);
        var stored = new List<string>();
        foreach (var mode in new[] { "naive", "streaming", "optimized" })
        {
            using var form = new MultipartFormDataContent { { new ByteArrayContent(bytes), "file", "same.bin" } };
            var (response, receipts) = await UploadAsync(form, mode);
            Assert.Equal(HttpStatusCode.Created, response.StatusCode);
            Assert.Contains($"Uploads.Reader={mode}", string.Join(", ", response.Headers.GetValues("X-Perf-Variants")), StringComparison.Ordinal);
            Assert.Contains(receipts[0].Id, Fixture.System.StoredUploads());
            stored.Add(Sha256(await File.ReadAllBytesAsync(Path.Combine(Fixture.System.UploadsDataDirectory, receipts[0].Id, "data"), Cancel)));
            Assert.Equal(Sha256(bytes), receipts[0].Sha256);
        }

        Assert.All(stored, sha => Assert.Equal(Sha256(bytes), sha));
    }

    /// <summary>
    /// The optimized writer fills 1 MiB blocks and writes each with direct I/O in 4 KiB multiples: a last partial
    /// block is padded and the file cut back to its size. Sizes on and around those edges store exactly their bytes.
    /// </summary>
    [Theory]
    [Lesson(Pitfalls.UploadsReader)]
    [InlineData(0)]
    [InlineData(1)]
    [InlineData(4095)]
    [InlineData(4096)]
    [InlineData(4097)]
    [InlineData(1024 * 1024 - 1)]
    [InlineData(1024 * 1024)]
    [InlineData(1024 * 1024 + 1)]
    [InlineData(2 * 1024 * 1024 + 4096)]
    public async Task The_optimized_rung_stores_exactly_the_bytes_of_any_size(int size)
    {
        var bytes = RandomNumberGenerator.GetBytes(size);
        using var form = new MultipartFormDataContent { { new ByteArrayContent(bytes), "file", "edge.bin" } };

        var (response, receipts) = await UploadAsync(form, "optimized");

        Assert.Equal(HttpStatusCode.Created, response.StatusCode);
        var stored = await File.ReadAllBytesAsync(Path.Combine(Fixture.System.UploadsDataDirectory, receipts[0].Id, "data"), Cancel);
        Assert.Equal(size, stored.Length);
        Assert.Equal(Sha256(bytes), Sha256(stored));
        Assert.Equal(Sha256(bytes), receipts[0].Sha256);
    }

    [Theory]
    [Lesson(Pitfalls.UploadsReader)]
    [MemberData(nameof(Modes))]
    public async Task Several_files_in_one_request_are_all_stored(string mode)
    {
        var files = Enumerable.Range(1, SmallSystemFixture.MaxFilesPerRequest).Select(i => RandomNumberGenerator.GetBytes(100_000 * i)).ToArray();
        using var form = new MultipartFormDataContent { { new StringContent("a plain field is ignored"), "note" } };
        for (var i = 0; i < files.Length; i++)
        {
            form.Add(new ByteArrayContent(files[i]) { Headers = { ContentType = new MediaTypeHeaderValue("image/png") } }, "file", $"picture {i}.png");
        }

        var (response, receipts) = await UploadAsync(form, mode);

        Assert.Equal(HttpStatusCode.Created, response.StatusCode);
        Assert.Equal(files.Select(Sha256), receipts.Select(r => r.Sha256));
        Assert.All(receipts, r => Assert.Equal("image/png", r.ContentType));
        Assert.Equal(receipts.Select(r => r.Id).Distinct().Count(), receipts.Count);
        await AssertNothingLeftBehindAsync();
    }

    [Theory]
    [Lesson(Pitfalls.GatewayBuffering)]
    [MemberData(nameof(GatewayModes))]
    public async Task A_body_over_Kestrels_30_MB_default_passes_the_Gateway_in_both_modes(string mode)
    {
        // The naive Gateway reads the whole body before YARP applies the route's limit: it must apply it itself.
        const long size = 32L * 1024 * 1024;
        using var request = new HttpRequestMessage(HttpMethod.Post, "/api/uploads/sink") { Content = LoadGen.Load.SyntheticFileContent.Create(size) };
        request.Headers.Add(Http.ModeHeader, mode);

        using var response = await Fixture.Gateway.SendAsync(request, Cancel);

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.InRange(await response.Content.ReadFromJsonAsync<long>(Cancel), size, size + 1024);
        Assert.Equal($"Gateway.Buffering={mode}, Gateway.Upstream={mode}", string.Join(", ", response.Headers.GetValues("X-Perf-Variants")));
    }

    [Fact]
    public async Task The_hashing_sink_answers_the_sha256_of_what_it_read()
    {
        var bytes = RandomNumberGenerator.GetBytes(1024 * 1024 + 3);
        using var plain = await Fixture.Gateway.PostAsync("/api/uploads/sink", new ByteArrayContent(bytes), Cancel);
        using var hashed = await Fixture.Gateway.PostAsync("/api/uploads/sink?sha256=true", new ByteArrayContent(bytes), Cancel);

        Assert.Equal(bytes.Length, await hashed.Content.ReadFromJsonAsync<long>(Cancel));
        Assert.Equal(Sha256(bytes), Assert.Single(hashed.Headers.GetValues("X-Sha256")));
        Assert.Equal(HttpStatusCode.OK, plain.StatusCode);
        Assert.False(plain.Headers.Contains("X-Sha256"));
    }

    public static TheoryData<string, string, int> BadUploads()
    {
        var data = new TheoryData<string, string, int>();
        foreach (var mode in new[] { "naive", "streaming", "optimized" })
        {
            data.Add(mode, "wrong content type", 415);
            data.Add(mode, "missing boundary", 400);
            data.Add(mode, "empty body", 400);
            data.Add(mode, "truncated multipart", 400);
            data.Add(mode, "oversize file", 413);
            data.Add(mode, "too many files", 400);
            data.Add(mode, "section without a file name", 400);
            data.Add(mode, "traversal file name", 400);
            data.Add(mode, "disallowed file type", 415);
        }

        return data;
    }

    [Theory]
    [Lesson(Pitfalls.UploadsReader)]
    [MemberData(nameof(BadUploads))]
    public async Task Bad_input_is_a_problem_response_and_leaves_nothing(string mode, string kase, int status)
    {
        var stored = StoredCount();
        var small = RandomNumberGenerator.GetBytes(10_000);
        using var content = kase switch
        {
            "wrong content type" => Multipart.Content(small, "application/octet-stream"),
            "missing boundary" => Multipart.Content(Multipart.Body([new("a.bin", "application/octet-stream", small)]), "multipart/form-data"),
            "empty body" => Multipart.Content([]),
            "truncated multipart" => Multipart.Content(Multipart.Body([new("a.bin", "application/octet-stream", RandomNumberGenerator.GetBytes(200_000))], closed: false)),
            "oversize file" => Multipart.Content(Multipart.Body([new("big.bin", "application/octet-stream", RandomNumberGenerator.GetBytes(SmallSystemFixture.MaxFileBytes + 1))])),
            "too many files" => Multipart.Content(Multipart.Body(Enumerable.Range(0, SmallSystemFixture.MaxFilesPerRequest + 1).Select(i => new Multipart.Part($"{i}.bin", "application/octet-stream", small)))),
            "section without a file name" => Multipart.Content(Multipart.Body([new("", "application/octet-stream", small)])),
            "traversal file name" => Multipart.Content(Multipart.Body([new("../../etc/passwd", "text/plain", small)])),
            "disallowed file type" => Multipart.Content(Multipart.Body([new("setup.exe", "application/x-msdownload", small)])),
            _ => throw new ArgumentOutOfRangeException(nameof(kase)),
        };
        using var request = new HttpRequestMessage(HttpMethod.Post, "/api/uploads") { Content = content };
        request.Headers.Add(Http.ModeHeader, mode);

        // A connection of its own: an earlier case refused before its body was read may leave the pooled connection
        // closing as the next request is written on it ("the response ended prematurely" after 3 ms), which a POST is
        // not retried on. What this test holds is the answer to bad input, not the reuse of such a connection.
        using var client = new HttpClient { BaseAddress = Fixture.Gateway.BaseAddress };
        using var response = await client.SendAsync(request, Cancel);

        Assert.Equal(status, (int)response.StatusCode);
        Assert.Equal("application/problem+json", response.Content.Headers.ContentType?.MediaType);
        var problem = (await response.Content.ReadFromJsonAsync<Http.ProblemDocument>(Cancel))!;
        Assert.Equal(status, problem.Status);
        Assert.False(string.IsNullOrWhiteSpace(problem.Title));
        await AssertNothingLeftBehindAsync(stored);
    }

    [Theory]
    [Lesson(Pitfalls.UploadsReader)]
    [MemberData(nameof(Modes))]
    public async Task A_client_that_disconnects_mid_body_leaves_nothing(string mode)
    {
        var stored = StoredCount();
        var head = Multipart.Body([new("cut.bin", "application/octet-stream", RandomNumberGenerator.GetBytes(1024 * 1024))], closed: false);
        await Multipart.SendAndLeaveAsync(Fixture.System.Gateway.BaseAddress, head, mode, linger: TimeSpan.FromMilliseconds(300));

        await AssertNothingLeftBehindAsync(stored);

        // The service is still serving.
        using var form = new MultipartFormDataContent { { new ByteArrayContent([1, 2, 3]), "file", "after.bin" } };
        Assert.Equal(HttpStatusCode.Created, (await UploadAsync(form, mode)).Response.StatusCode);
    }

    [Fact]
    [Lesson(Pitfalls.UploadsDownload)]
    public async Task Optimized_downloads_answer_ranges_and_refuse_unsatisfiable_ones()
    {
        var bytes = RandomNumberGenerator.GetBytes(50_000);
        using var form = new MultipartFormDataContent { { new ByteArrayContent(bytes), "file", "ranged.bin" } };
        var id = (await UploadAsync(form, "optimized")).Receipts[0].Id;

        using var ranged = await GetAsync(id, "optimized", "bytes=1000-1999");
        Assert.Equal(HttpStatusCode.PartialContent, ranged.StatusCode);
        Assert.Equal(bytes[1000..2000], await ranged.Content.ReadAsByteArrayAsync(Cancel));
        Assert.Equal("bytes 1000-1999/50000", ranged.Content.Headers.ContentRange?.ToString());

        using var unsatisfiable = await GetAsync(id, "optimized", "bytes=60000-70000");
        Assert.Equal(HttpStatusCode.RequestedRangeNotSatisfiable, unsatisfiable.StatusCode);
        Assert.Equal("bytes */50000", unsatisfiable.Content.Headers.ContentRange?.ToString());

        // RFC 9110 14.2: a Range header that does not parse is ignored, so the whole file comes back.
        using var malformed = await GetAsync(id, "optimized", "bytes=abc");
        Assert.Equal(HttpStatusCode.OK, malformed.StatusCode);
        Assert.Equal(bytes, await malformed.Content.ReadAsByteArrayAsync(Cancel));

        // The naive download ignores ranges: a 200 with every byte, which is still correct HTTP.
        using var naive = await GetAsync(id, "naive", "bytes=1000-1999");
        Assert.Equal(HttpStatusCode.OK, naive.StatusCode);
        Assert.Equal(bytes, await naive.Content.ReadAsByteArrayAsync(Cancel));
    }

    [Theory]
    [InlineData("0123456789abcdef0123456789abcdef")]
    [InlineData("..%2F..%2Fetc%2Fpasswd")]
    [InlineData("not-an-id")]
    public async Task An_unknown_or_invalid_id_is_a_404_problem(string id)
    {
        var answer = await Http.GetAsync(Fixture.Gateway, $"/api/uploads/{id}");

        Assert.Equal(404, answer.Status);
        Assert.Equal("application/problem+json", answer.MediaType);
    }

    [Fact]
    [Lesson(Pitfalls.UploadsReader)]
    public async Task Upload_metrics_and_spans_name_the_reader_variant()
    {
        using var form = new MultipartFormDataContent { { new ByteArrayContent(RandomNumberGenerator.GetBytes(200_000)), "file", "metered.bin" } };
        Assert.Equal(HttpStatusCode.Created, (await UploadAsync(form, "naive")).Response.StatusCode);

        Assert.True(await Fixture.Telemetry.WaitForAsync("metrics", TimeSpan.FromSeconds(10), "httpperf.upload.spooled", "perf.variant", "naive"));
        Assert.True(await Fixture.Telemetry.WaitForAsync("metrics", TimeSpan.FromSeconds(10), "httpperf.upload.received", "httpperf.upload.duration"));
        Assert.True(await Fixture.Telemetry.WaitForAsync("traces", TimeSpan.FromSeconds(10), "uploads", "Uploads.Reader=naive"));
    }

    [Theory]
    [Lesson(Pitfalls.GatewayUpstream)]
    [MemberData(nameof(GatewayModes))]
    public async Task The_Gateway_relays_a_body_over_the_protocol_of_its_Gateway_Upstream_rung_and_a_download_over_HTTP_1_1(string mode)
    {
        // Gateway.Upstream: optimized sends a request with a body to Uploads.Api's HTTP/2 listener, and keeps a
        // download on HTTP/1.1; naive sends both over HTTP/1.1. The Gateway's client spans say which, and where.
        var started = DateTime.UtcNow;
        using var form = new MultipartFormDataContent { { new ByteArrayContent(RandomNumberGenerator.GetBytes(64 * 1024)), "file", $"{mode}.bin" } };
        var (response, receipts) = await UploadAsync(form, mode);
        Assert.Equal(HttpStatusCode.Created, response.StatusCode);
        Assert.Equal(200, (await Http.GetAsync(Fixture.Gateway, $"/api/uploads/{receipts[0].Id}", mode)).Status);

        var uploads = Fixture.System.Uploads;
        var expected = new[]
        {
            (Method: "POST", Port: mode == PerfMode.Optimized ? uploads.Http2Address!.Port : uploads.BaseAddress.Port, Version: mode == PerfMode.Optimized ? "2" : "1.1"),
            (Method: "GET", Port: uploads.BaseAddress.Port, Version: "1.1"),
        };
        foreach (var call in expected)
        {
            // This test's own calls: the collection's tests run one at a time.
            SpanRecord? Relay() => Fixture.Telemetry.Spans().FirstOrDefault(s => s.Service == SystemContract.Gateway && s.Start >= started
                && s["http.request.method"] == call.Method && s["network.protocol.version"] is not null && s["url.full"]?.Contains("/uploads", StringComparison.Ordinal) == true);
            Assert.True(await Poll.UntilAsync(() => Relay() is not null, TimeSpan.FromSeconds(10)), $"{mode}: no Gateway client span {call.Method} to Uploads.Api");
            var relay = Relay()!;
            Assert.Equal(call.Port.ToString(System.Globalization.CultureInfo.InvariantCulture), relay["server.port"]);
            Assert.Equal(call.Version, relay["network.protocol.version"]);
        }
    }

    private async Task<(HttpResponseMessage Response, List<UploadReceipt> Receipts)> UploadAsync(HttpContent form, string mode)
    {
        using var request = new HttpRequestMessage(HttpMethod.Post, "/api/uploads") { Content = form };
        request.Headers.Add(Http.ModeHeader, mode);
        var response = await Fixture.Gateway.SendAsync(request, Cancel);
        var receipts = response.StatusCode == HttpStatusCode.Created
            ? (await response.Content.ReadFromJsonAsync<List<UploadReceipt>>(Cancel))!
            : [];
        return (response, receipts);
    }

    private Task<HttpResponseMessage> GetAsync(string id, string mode, string range)
    {
        var request = new HttpRequestMessage(HttpMethod.Get, $"/api/uploads/{id}");
        request.Headers.Add(Http.ModeHeader, mode);
        request.Headers.TryAddWithoutValidation("Range", range);
        return Fixture.Gateway.SendAsync(request, Cancel);
    }

    private int StoredCount() => Fixture.System.StoredUploads().Count;

    private void AssertNothingLeftBehind()
    {
        Assert.Empty(Fixture.System.IncomingFiles());
        Assert.Empty(Directory.GetFiles(Fixture.System.TempDirectory("Uploads.Api"), "*", SearchOption.AllDirectories));
        Assert.Empty(Directory.GetFiles(Fixture.System.TempDirectory("Gateway"), "*", SearchOption.AllDirectories));
    }

    /// <summary>
    /// A request's temp files (the naive reader's form buffers) are deleted when the request ends, which
    /// may be just after the client has its response: poll briefly.
    /// </summary>
    private async Task AssertNothingLeftBehindAsync(int? storedBefore = null)
    {
        var deadline = DateTime.UtcNow.AddSeconds(10);
        while (true)
        {
            try
            {
                AssertNothingLeftBehind();
                if (storedBefore is { } before)
                {
                    Assert.Equal(before, StoredCount());
                }

                return;
            }
            catch (Xunit.Sdk.XunitException) when (DateTime.UtcNow < deadline)
            {
                await Task.Delay(100, Cancel);
            }
        }
    }

    /// <summary>What the Gateway serves in <paramref name="mode"/>: it has no streaming rung, so optimized.</summary>
    private static string GatewayServing(string mode) => Pitfalls.Find(Pitfalls.GatewayBuffering)!.Serving(mode);

    private static string Sha256(byte[] bytes) => Convert.ToHexStringLower(SHA256.HashData(bytes));
}
