using System.Diagnostics;
using System.Text.Json;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.Tests.Infrastructure;

namespace HttpPerf.Tests.Processes;

/// <summary>
/// An upload refused mid-body reaches a client that sends at a realistic pace (2 MiB/s) through the Gateway with the
/// service's own status and problem, in every rung: not a 502 because the service closed the connection while the
/// Gateway's HttpClient was still sending (dotnet/yarp#1501).
/// </summary>
[Collection(SmallSystemCollection.Name)]
[Trait(Kind.Name, Kind.Processes)]
public sealed class RefusalTests(SmallSystemFixture fixture)
{
    private const int Pace = 2 * 1024 * 1024;

    // Sent after the refusal: 7 s at the pace, past Kestrel's own drain of a body its app did not read (5 s).
    private const int RestPastKestrelsDrain = 14 * 1024 * 1024;

    public static TheoryData<string> Modes => [.. PerfMode.All];

    [Theory]
    [MemberData(nameof(Modes))]
    public async Task A_file_over_the_limit_sent_at_2_MiB_per_s_through_the_Gateway_gets_413(string mode)
    {
        // 18 MiB against the fixture's 4 MiB limit: the streaming rungs know at 4 MiB, 2 s into the body, and the rest
        // takes 7 s more, past the 5 s Kestrel drains a body its app left before it closes the connection.
        var file = EveryRung.RandomFile(SmallSystemFixture.MaxFileBytes + RestPastKestrelsDrain);
        var (status, problem, _) = await SendAsync(Multipart.Body([new Multipart.Part("big.bin", "application/octet-stream", file)]), mode);
        Assert.Equal(413, status);
        Assert.Contains("larger than", problem, StringComparison.Ordinal);
    }

    [Theory]
    [MemberData(nameof(Modes))]
    public async Task A_file_of_a_refused_type_first_in_a_paced_body_gets_415_through_the_Gateway(string mode)
    {
        var body = Multipart.Body(
        [
            new Multipart.Part("script.sh", "application/x-sh", "echo"u8.ToArray()),
            new Multipart.Part("after.bin", "application/octet-stream", EveryRung.RandomFile(RestPastKestrelsDrain)),
        ]);
        var (status, problem, _) = await SendAsync(body, mode);
        Assert.Equal(415, status);
        Assert.Contains("not accepted", problem, StringComparison.Ordinal);
    }

    private async Task<(int Status, string Problem, TimeSpan Elapsed)> SendAsync(byte[] body, string mode)
    {
        using var request = new HttpRequestMessage(HttpMethod.Post, "/api/uploads") { Content = PacedContent.Multipart(body, Pace) };
        request.Headers.Add(Http.ModeHeader, mode);
        var clock = Stopwatch.StartNew();
        using var response = await fixture.Gateway.SendAsync(request, TestContext.Current.CancellationToken);
        var text = await response.Content.ReadAsStringAsync(TestContext.Current.CancellationToken);
        Assert.Equal("application/problem+json", response.Content.Headers.ContentType?.MediaType);
        using var problem = JsonDocument.Parse(text);
        return ((int)response.StatusCode, problem.RootElement.GetProperty("title").GetString() ?? "", clock.Elapsed);
    }
}
