using System.Net.Sockets;
using System.Net;
using System.Text;
using HttpPerf.Tests.Infrastructure;

namespace HttpPerf.Tests.Processes;

/// <summary>
/// What an anonymous client can make the system do, with the Gateway's defaults: it cannot force the expensive
/// path, exhaust the proxy's concurrency, fill the disk, or hold a connection by sending slowly.
/// </summary>
[Collection(Lanes.Processes)]
[Trait(Kind.Name, Kind.Processes)]
public sealed class EdgeTests(EdgeSystemFixture fixture) : SystemTests<EdgeSystemFixture>(fixture)
{
    private const string Optimized = "Gateway.Buffering=optimized, Gateway.Upstream=optimized, Frontend.CatalogClient=optimized, Frontend.Replicas=optimized, Catalog.Serialization=optimized";

    [Theory]
    [InlineData("X-Perf-Mode", "naive")]
    [InlineData("baggage", "perf-mode=naive")]
    [InlineData("baggage", "team=web, perf-mode=naive")]
    public async Task An_anonymous_client_cannot_force_a_mode_on_any_hop(string header, string value)
    {
        using var request = new HttpRequestMessage(HttpMethod.Get, "/api/products");
        request.Headers.TryAddWithoutValidation(header, value);

        using var response = await Fixture.Gateway.SendAsync(request, Cancel);

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal(Optimized, string.Join(", ", response.Headers.GetValues("X-Perf-Variants")));
    }

    [Fact]
    public async Task The_admin_key_lets_its_holder_force_a_mode_on_every_hop()
    {
        using var request = new HttpRequestMessage(HttpMethod.Get, "/api/products");
        request.Headers.Add("X-Perf-Mode", "naive");
        request.Headers.Add("X-Admin-Key", Fixture.AdminKey);

        using var response = await Fixture.Gateway.SendAsync(request, Cancel);

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal("Gateway.Buffering=naive, Gateway.Upstream=naive, Frontend.CatalogClient=naive, Frontend.Replicas=naive, Catalog.Serialization=naive", string.Join(", ", response.Headers.GetValues("X-Perf-Variants")));

        using var wrongKey = new HttpRequestMessage(HttpMethod.Get, "/api/products") { Headers = { { "X-Perf-Mode", "naive" }, { "X-Admin-Key", "not-the-key" } } };
        using var refused = await Fixture.Gateway.SendAsync(wrongKey, Cancel);
        Assert.Equal(Optimized, string.Join(", ", refused.Headers.GetValues("X-Perf-Variants")));
    }

    [Fact]
    public async Task Past_the_concurrency_limit_the_gateway_answers_429_with_retry_after_and_never_5xx()
    {
        var responses = await Task.WhenAll(Enumerable.Range(0, 12).Select(async _ =>
        {
            using var response = await Fixture.Gateway.GetAsync("/api/products", Cancel);
            var body = await response.Content.ReadAsStringAsync(Cancel);
            return (Status: (int)response.StatusCode, RetryAfter: response.Headers.RetryAfter?.Delta, response.Content.Headers.ContentType?.MediaType, Body: body);
        }));

        Assert.DoesNotContain(responses, r => r.Status >= 500);
        Assert.All(responses, r => Assert.Contains(r.Status, new[] { 200, 429 }));
        var rejected = responses.Where(r => r.Status == 429).ToList();
        Assert.NotEmpty(rejected);
        Assert.All(rejected, r =>
        {
            Assert.Equal(TimeSpan.FromSeconds(1), r.RetryAfter);
            Assert.Equal("application/problem+json", r.MediaType);
        });
        Assert.Contains(responses, r => r.Status == 200);

        // Health is not a proxied route: it answers whatever the proxy's load.
        await Fixture.AssertEveryServiceHealthyAsync();
    }

    [Fact]
    public async Task The_storage_quota_refuses_an_upload_with_507_leaves_nothing_of_it_holds_after_a_restart_and_a_delete_gives_it_back()
    {
        // Whatever ran before stored less than 400 KB: the malformed-input run stores nothing.
        var before = Fixture.StoredFiles();

        Uri firstUpload;
        using (var first = await UploadAsync(600_000))
        {
            Assert.Equal(HttpStatusCode.Created, first.StatusCode);
            firstUpload = first.Headers.Location!;
        }

        using (var second = await UploadAsync(600_000))
        {
            Assert.Equal(HttpStatusCode.InsufficientStorage, second.StatusCode);
            Assert.Equal("application/problem+json", second.Content.Headers.ContentType?.MediaType);
        }

        await Fixture.AssertNothingLeftBehindAsync(stored: before + 1);

        // The quota is counted from the files on disk at start.
        var address = Fixture.System.Uploads.BaseAddress;
        await Fixture.System.Uploads.StopAsync(TimeSpan.FromSeconds(20));
        await Fixture.System.StartUploadsAsync(Fixture.Options, address, Cancel);
        using (var third = await UploadAsync(600_000))
        {
            Assert.Equal(HttpStatusCode.InsufficientStorage, third.StatusCode);
        }

        Uri smallUpload;
        using (var small = await UploadAsync(100_000))
        {
            Assert.Equal(HttpStatusCode.Created, small.StatusCode);
            smallUpload = small.Headers.Location!;
        }

        await Fixture.AssertNothingLeftBehindAsync(stored: before + 2);

        // DELETE /api/uploads/{id}: 204, the bytes gone and the quota given back (600 KB fit again); a second DELETE,
        // or one of an id never stored, is a 404 problem.
        Assert.Equal(HttpStatusCode.NoContent, await DeleteAsync(firstUpload));
        Assert.Equal(HttpStatusCode.NotFound, await DeleteAsync(firstUpload));
        Assert.Equal(HttpStatusCode.NotFound, await DeleteAsync(new Uri("/uploads/0123456789abcdef0123456789abcdef", UriKind.Relative)));
        Assert.Equal(404, (await Http.GetAsync(Fixture.Gateway, "/api" + firstUpload)).Status);
        await Fixture.AssertNothingLeftBehindAsync(stored: before + 1);
        using (var again = await UploadAsync(600_000))
        {
            Assert.Equal(HttpStatusCode.Created, again.StatusCode);
            Assert.Equal(HttpStatusCode.NoContent, await DeleteAsync(again.Headers.Location!));
        }

        Assert.Equal(HttpStatusCode.NoContent, await DeleteAsync(smallUpload));
        await Fixture.AssertNothingLeftBehindAsync(stored: before);
    }

    /// <summary>Deletes the upload a 201's <c>Location</c> names (<c>/uploads/{id}</c>, behind the Gateway's <c>/api</c>).</summary>
    private async Task<HttpStatusCode> DeleteAsync(Uri location)
    {
        using var response = await Fixture.Gateway.DeleteAsync("/api" + location.OriginalString, Cancel);
        if (response.StatusCode != HttpStatusCode.NoContent)
        {
            Assert.Equal("application/problem+json", response.Content.Headers.ContentType?.MediaType);
        }

        return response.StatusCode;
    }

    [Fact]
    public async Task A_client_uploading_a_few_bytes_a_second_is_cut_off_with_nothing_left_while_others_are_served()
    {
        var stored = Fixture.StoredFiles();
        using var client = new TcpClient();
        await client.ConnectAsync(Fixture.System.Gateway.BaseAddress.Host, Fixture.System.Gateway.BaseAddress.Port, Cancel);
        var stream = client.GetStream();
        var head = Multipart.Body([new Multipart.Part("slow.bin", "application/octet-stream", new byte[10_000])]);
        await stream.WriteAsync(Encoding.ASCII.GetBytes(
            $"POST /api/uploads HTTP/1.1\r\nHost: {Fixture.System.Gateway.BaseAddress.Authority}\r\nContent-Type: multipart/form-data; boundary={Multipart.Boundary}\r\nContent-Length: {head.Length}\r\n\r\n"), Cancel);

        // 4 bytes a second, far under the 240 B/s minimum; a normal request is served meanwhile.
        var clock = System.Diagnostics.Stopwatch.StartNew();
        var cut = false;
        for (var i = 0; i < 40 && !cut; i++)
        {
            try
            {
                await stream.WriteAsync(head.AsMemory(i * 4, 4), Cancel);
                if (i == 3)
                {
                    Assert.Equal(200, (await Http.GetAsync(Fixture.Gateway, "/api/catalog/products")).Status);
                }

                await Task.Delay(1000, Cancel);
                cut = client.Client.Poll(0, SelectMode.SelectRead) && client.Client.Available == 0 || await AnsweredAsync(stream);
            }
            catch (IOException)
            {
                cut = true;
            }
        }

        Assert.True(cut, $"the connection was still open after {clock.Elapsed}");
        Assert.InRange(clock.Elapsed, TimeSpan.FromSeconds(4), TimeSpan.FromSeconds(20));
        await Fixture.AssertNothingLeftBehindAsync(stored);
        await Fixture.AssertEveryServiceHealthyAsync();
    }

    [Fact]
    public async Task A_client_trickling_its_headers_is_cut_off()
    {
        using var client = new TcpClient();
        await client.ConnectAsync(Fixture.System.Gateway.BaseAddress.Host, Fixture.System.Gateway.BaseAddress.Port, Cancel);
        var stream = client.GetStream();
        await stream.WriteAsync("GET /api/products HTTP/1.1\r\nHost: x\r\n"u8.ToArray(), Cancel);

        var clock = System.Diagnostics.Stopwatch.StartNew();
        var cut = false;
        for (var i = 0; i < 20 && !cut; i++)
        {
            try
            {
                await stream.WriteAsync(Encoding.ASCII.GetBytes($"X-Slow-{i}: {i}\r\n"), Cancel);
                await Task.Delay(500, Cancel);
                cut = client.Client.Poll(0, SelectMode.SelectRead);
            }
            catch (IOException)
            {
                cut = true;
            }
        }

        Assert.True(cut, $"the connection was still open after {clock.Elapsed}");
        Assert.InRange(clock.Elapsed, TimeSpan.FromSeconds(2.5), TimeSpan.FromSeconds(9));
        Assert.Equal(200, (await Http.GetAsync(Fixture.Gateway, "/api/catalog/products")).Status);
    }

    private async Task<HttpResponseMessage> UploadAsync(int bytes)
    {
        using var form = new MultipartFormDataContent { { new ByteArrayContent(new byte[bytes]), "file", "quota.bin" } };
        return await Fixture.Gateway.PostAsync("/api/uploads", form, Cancel);
    }

    /// <summary>Whether the server has written a response (for example a 408) on this connection.</summary>
    private static async Task<bool> AnsweredAsync(NetworkStream stream)
    {
        if (!stream.DataAvailable)
        {
            return false;
        }

        var buffer = new byte[256];
        return await stream.ReadAsync(buffer, Cancel) >= 0;
    }
}
