using System.Net.Sockets;
using System.Text;
using HttpPerf.Tests.Infrastructure;

namespace HttpPerf.Tests.Processes;

/// <summary>
/// A seeded run of malformed requests through the Gateway: broken multipart, truncated bodies, wrong
/// Content-Length, huge and duplicated headers, bad ranges, bad JSON to the admin API, path tricks in upload
/// names and ids. None may get a 5xx; every rejection the application makes is a problem response; nothing is
/// left behind; every service stays healthy. The seed is printed: replay a failure with MALFORMED_SEED=n.
/// Two answers are the platform's own, and accepted bare: Kestrel's protocol-level rejections (a request line,
/// header or framing it cannot parse: 400, 431) happen before any middleware, and an unsatisfiable range gets
/// the file result's 416 with <c>Content-Range</c>, as RFC 9110 specifies.
/// </summary>
[Collection(Lanes.Processes)]
[Trait(Kind.Name, Kind.Processes)]
public sealed class MalformedInputTests(EdgeSystemFixture fixture) : SystemTests<EdgeSystemFixture>(fixture)
{
    private const int Requests = 240;

    /// <summary>What came back: the status (0 when the server closed without answering), its media type, and whether Kestrel's protocol layer could have sent it.</summary>
    private sealed record Outcome(int Status, string? MediaType, bool ProtocolLevel = false);

    private sealed record Case(string Name, Func<Random, Task<(string What, Outcome Outcome)>> Send);

    [Fact]
    public async Task A_seeded_run_of_malformed_requests_gets_no_5xx_only_problem_rejections_and_leaves_nothing_behind()
    {
        var seed = int.TryParse(Environment.GetEnvironmentVariable("MALFORMED_SEED"), out var given) ? given : Random.Shared.Next();
        TestContext.Current.TestOutputHelper?.WriteLine($"malformed-input seed {seed} (replay with MALFORMED_SEED={seed})");
        var random = new Random(seed);
        var stored = Fixture.StoredFiles();
        var downloadId = await LoadGen.Load.SyntheticFileContent.StoreAsync(Fixture.Gateway, 1_000, Cancel);
        Case[] cases =
        [
            new("broken multipart", BrokenMultipartAsync),
            new("truncated body", TruncatedBodyAsync),
            new("wrong Content-Length", WrongContentLengthAsync),
            new("huge header", HugeHeaderAsync),
            new("duplicated headers", DuplicatedHeadersAsync),
            new("invalid Range", r => InvalidRangeAsync(r, downloadId)),
            new("bad JSON to the admin API", BadAdminJsonAsync),
            new("path trick in an upload name", PathTrickNameAsync),
            new("path trick in an upload id", PathTrickIdAsync),
            new("bad keyset in a catalog read", BadKeysetAsync),
        ];

        var failures = new List<string>();
        var seen = new Dictionary<string, int>();
        var answers = new SortedDictionary<string, int>(StringComparer.Ordinal);
        for (var i = 0; i < Requests; i++)
        {
            var @case = cases[random.Next(cases.Length)];
            var (what, outcome) = await @case.Send(random);
            seen[@case.Name] = seen.GetValueOrDefault(@case.Name) + 1;
            var answer = $"{@case.Name}: {(outcome.Status == 0 ? "closed" : outcome.Status)}{(outcome.MediaType is null ? "" : " " + outcome.MediaType)}";
            answers[answer] = answers.GetValueOrDefault(answer) + 1;
            var problem = outcome.MediaType == "application/problem+json";
            var platformAnswer = outcome.ProtocolLevel || outcome.Status is 0 or 416;
            if (outcome.Status >= 500 || (outcome.Status >= 400 && !problem && !platformAnswer))
            {
                failures.Add($"#{i} {@case.Name} ({what}): {outcome.Status} {outcome.MediaType}");
            }
        }

        TestContext.Current.TestOutputHelper?.WriteLine(string.Join(Environment.NewLine, answers.Select(a => $"{a.Value,4} x {a.Key}")));
        Assert.True(failures.Count == 0, $"seed {seed}: {failures.Count} bad answers:{Environment.NewLine}{string.Join(Environment.NewLine, failures)}");
        Assert.Equal(cases.Length, seen.Count);
        await Fixture.AssertNothingLeftBehindAsync(stored + 1);
        await Fixture.AssertEveryServiceHealthyAsync();
        var variants = (await Http.GetAsync(Fixture.Gateway, "/api/products")).Variants;
        Assert.Equal("Gateway.Buffering=optimized, Gateway.Upstream=optimized, Frontend.CatalogClient=optimized, Frontend.Replicas=optimized, Catalog.Serialization=optimized", variants); // no flag was changed
    }

    private async Task<(string, Outcome)> BrokenMultipartAsync(Random random)
    {
        var file = new Multipart.Part("ok.bin", "application/octet-stream", RandomBytes(random, 2_000));
        var body = Multipart.Body([file]);
        (string What, string ContentType, byte[] Body) broken = random.Next(6) switch
        {
            0 => ("boundary in the header differs from the body's", "multipart/form-data; boundary=other-boundary", body),
            1 => ("no closing boundary", $"multipart/form-data; boundary={Multipart.Boundary}", Multipart.Body([file], closed: false)),
            2 => ("empty boundary", "multipart/form-data; boundary=", body),
            3 => ("a boundary over 70 characters", $"multipart/form-data; boundary={new string('b', 71 + random.Next(200))}", body),
            4 => ("garbage instead of parts", $"multipart/form-data; boundary={Multipart.Boundary}", RandomBytes(random, 1 + random.Next(5_000))),
            _ => ("part headers never end", $"multipart/form-data; boundary={Multipart.Boundary}", Encoding.ASCII.GetBytes($"--{Multipart.Boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"x.bin\"\r\n" + new string('h', 20_000))),
        };
        using var content = new ByteArrayContent(broken.Body);
        content.Headers.TryAddWithoutValidation("Content-Type", broken.ContentType);
        return (broken.What, await SendAsync(new HttpRequestMessage(HttpMethod.Post, "/api/uploads") { Content = content }));
    }

    private async Task<(string, Outcome)> TruncatedBodyAsync(Random random)
    {
        var body = Multipart.Body([new Multipart.Part("cut.bin", "application/octet-stream", RandomBytes(random, 50_000))]);
        var sent = random.Next(1, body.Length - 1);
        var head = $"POST /api/uploads HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary={Multipart.Boundary}\r\nContent-Length: {body.Length}\r\n\r\n";
        return ($"{sent} of {body.Length} bytes, then the client closes its side", await RawAsync([.. Encoding.ASCII.GetBytes(head), .. body.AsSpan(0, sent)], halfClose: true));
    }

    private async Task<(string, Outcome)> WrongContentLengthAsync(Random random)
    {
        var body = Multipart.Body([new Multipart.Part("len.bin", "application/octet-stream", RandomBytes(random, 5_000))]);
        // Too short cuts into the closing delimiter or before it: a body cut only in the CRLF after "--boundary--" is
        // still a whole multipart body (RFC 2046 makes that CRLF optional), and its upload is rightly stored (seed 710914183).
        var closing = Encoding.ASCII.GetByteCount($"\r\n--{Multipart.Boundary}--\r\n");
        var declared = random.Next(2) == 0 ? random.Next(0, body.Length - closing + 1) : body.Length + random.Next(1, 10_000);
        var head = $"POST /api/uploads HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary={Multipart.Boundary}\r\nContent-Length: {declared}\r\n\r\n";
        // Too short: the rest of the body reads as a next request. Too long: the client then closes its side, as one that gave up.
        return ($"Content-Length {declared} for {body.Length} bytes", await RawAsync([.. Encoding.ASCII.GetBytes(head), .. body], halfClose: declared > body.Length));
    }

    private async Task<(string, Outcome)> HugeHeaderAsync(Random random)
    {
        var size = random.Next(33_000, 200_000);
        var head = $"GET /api/catalog/products HTTP/1.1\r\nHost: x\r\nX-Huge: {new string('h', size)}\r\n\r\n";
        return ($"a {size}-byte header", await RawAsync(Encoding.ASCII.GetBytes(head), halfClose: false));
    }

    private async Task<(string, Outcome)> DuplicatedHeadersAsync(Random random)
    {
        switch (random.Next(4))
        {
            case 0:
                return ("two Content-Length headers", await RawAsync(Encoding.ASCII.GetBytes("POST /api/uploads HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nContent-Length: 9\r\n\r\nabcd"), halfClose: true));
            case 1:
                return ("two Host headers", await RawAsync(Encoding.ASCII.GetBytes("GET /api/products HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n"), halfClose: false));
            case 2:
                var request = new HttpRequestMessage(HttpMethod.Get, "/admin/flags");
                request.Headers.TryAddWithoutValidation("X-Admin-Key", [Fixture.AdminKey, "second-key"]);
                return ("the admin key twice", await SendAsync(request));
            default:
                var modes = new HttpRequestMessage(HttpMethod.Get, "/api/catalog/products");
                modes.Headers.TryAddWithoutValidation("X-Perf-Mode", ["naive", "optimized"]);
                modes.Headers.TryAddWithoutValidation("Content-Type", ["a/b", "c/d"]);
                return ("two X-Perf-Mode and two Content-Type headers", await SendAsync(modes));
        }
    }

    private async Task<(string, Outcome)> InvalidRangeAsync(Random random, string id)
    {
        string[] ranges = ["bytes=abc", "bytes=5-1", "bytes=99999999-", "bytes=-0", "bytes=0-0,1-1,2-2,-1", "items=0-1", "bytes=", "bytes=--1", $"bytes={new string('9', 40)}-", "bytes=0-1, bytes=2-3"];
        var range = ranges[random.Next(ranges.Length)];
        var request = new HttpRequestMessage(HttpMethod.Get, $"/api/uploads/{id}");
        request.Headers.TryAddWithoutValidation("Range", range);
        // Both download writers: the admin key may force a mode at the edge.
        request.Headers.Add("X-Admin-Key", Fixture.AdminKey);
        request.Headers.Add("X-Perf-Mode", random.Next(2) == 0 ? "naive" : "optimized");
        return (range, await SendAsync(request));
    }

    private async Task<(string, Outcome)> BadAdminJsonAsync(Random random)
    {
        string[] bodies = ["{", "123", "\"nope\"", "null", "[]", "\"naive", "{\"variant\":\"naive\"}", "", new string('[', 5_000), "\"" + new string('x', 100_000) + "\""];
        var body = bodies[random.Next(bodies.Length)];
        var path = random.Next(3) switch { 0 => "/admin/flags", 1 => "/admin/flags/Catalog.Serialization", _ => "/admin/flags/..%2F..%2Fetc%2Fpasswd" };
        var request = new HttpRequestMessage(HttpMethod.Put, path) { Content = new StringContent(body, Encoding.UTF8, random.Next(4) == 0 ? "text/plain" : "application/json") };
        request.Headers.Add("X-Admin-Key", Fixture.AdminKey);
        return ($"PUT {path} {(body.Length > 20 ? body[..20] + "…" : body)}", await SendAsync(request));
    }

    private async Task<(string, Outcome)> PathTrickNameAsync(Random random)
    {
        string[] names = ["../../etc/passwd", "..\\..\\windows\\win.ini", "a/b.bin", "C:evil.bin", ".", "..", "x\u0000y.bin", new string('n', 300), "/absolute.bin", "line\r\nbreak.bin"];
        var name = names[random.Next(names.Length)];
        var body = Multipart.Body([new Multipart.Part(name, "application/octet-stream", RandomBytes(random, 1_000))]);
        var content = new ByteArrayContent(body);
        content.Headers.TryAddWithoutValidation("Content-Type", $"multipart/form-data; boundary={Multipart.Boundary}");
        var request = new HttpRequestMessage(HttpMethod.Post, "/api/uploads") { Content = content };
        request.Headers.Add("X-Admin-Key", Fixture.AdminKey);
        request.Headers.Add("X-Perf-Mode", random.Next(2) == 0 ? "naive" : "optimized");
        return ($"file name {name.Replace("\0", "\\0", StringComparison.Ordinal)}", await SendAsync(request));
    }

    private async Task<(string, Outcome)> PathTrickIdAsync(Random random)
    {
        string[] ids = ["..%2F..%2Fappsettings.json", "%2e%2e", "%2e%2e%2f%2e%2e%2fflags.json", "ABCDEF0123456789ABCDEF0123456789", new string('a', 33), "x%00y", ".incoming", "0123456789abcdef0123456789abcdef.json", "%252e%252e%252f", new string('a', 5_000)];
        var id = ids[random.Next(ids.Length)];
        return ($"id {id[..Math.Min(id.Length, 40)]}", await SendAsync(new HttpRequestMessage(HttpMethod.Get, $"/api/uploads/{id}")));
    }

    private async Task<(string, Outcome)> BadKeysetAsync(Random random)
    {
        string[] afters = ["-1", "x", "99999999999", "1.5", "%00", ""];
        var after = afters[random.Next(afters.Length)];
        return ($"after={after}", await SendAsync(new HttpRequestMessage(HttpMethod.Get, $"/api/catalog/products?after={after}")));
    }

    private async Task<Outcome> SendAsync(HttpRequestMessage request)
    {
        using (request)
        {
            try
            {
                using var response = await Fixture.Gateway.SendAsync(request, Cancel);
                await response.Content.ReadAsByteArrayAsync(Cancel);
                return new Outcome((int)response.StatusCode, response.Content.Headers.ContentType?.MediaType, ProtocolLevel: (int)response.StatusCode is 400 or 431 && response.Content.Headers.ContentLength == 0);
            }
            catch (HttpRequestException)
            {
                return new Outcome(0, null);
            }
        }
    }

    /// <summary>Sends bytes on a new connection (optionally closing the sending side), and reads the answer's status line and headers, if any.</summary>
    private async Task<Outcome> RawAsync(byte[] bytes, bool halfClose)
    {
        using var client = new TcpClient();
        await client.ConnectAsync(Fixture.System.Gateway.BaseAddress.Host, Fixture.System.Gateway.BaseAddress.Port, Cancel);
        var stream = client.GetStream();
        try
        {
            await stream.WriteAsync(bytes, Cancel);
            if (halfClose)
            {
                client.Client.Shutdown(SocketShutdown.Send);
            }
        }
        catch (IOException)
        {
            // The server closed first (it refused the headers): read what it said.
        }

        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(Cancel);
        timeout.CancelAfter(TimeSpan.FromSeconds(10));
        var answer = new MemoryStream();
        var buffer = new byte[16 * 1024];
        try
        {
            int read;
            while ((read = await stream.ReadAsync(buffer, timeout.Token)) > 0 && !Encoding.ASCII.GetString(answer.ToArray()).Contains("\r\n\r\n", StringComparison.Ordinal))
            {
                answer.Write(buffer, 0, read);
            }
        }
        catch (Exception e) when (e is IOException or OperationCanceledException)
        {
            // Closed or reset: whatever arrived is the answer.
        }

        var text = Encoding.ASCII.GetString(answer.ToArray());
        if (!text.StartsWith("HTTP/1.1 ", StringComparison.Ordinal) || text.Length < 12)
        {
            return new Outcome(0, null);
        }

        var status = int.Parse(text.AsSpan(9, 3), System.Globalization.CultureInfo.InvariantCulture);
        var headers = text.Split("\r\n\r\n")[0].Split("\r\n");
        var type = headers.FirstOrDefault(h => h.StartsWith("Content-Type:", StringComparison.OrdinalIgnoreCase))?["Content-Type:".Length..].Split(';')[0].Trim();
        var empty = headers.Any(h => h.Equals("Content-Length: 0", StringComparison.OrdinalIgnoreCase));
        return new Outcome(status, type, ProtocolLevel: status is 400 or 431 && empty);
    }

    private static byte[] RandomBytes(Random random, int length)
    {
        var bytes = new byte[length];
        random.NextBytes(bytes);
        return bytes;
    }
}
