using System.Diagnostics;
using System.Net.Http.Json;
using LoadGen.Load;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Http.Features;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using HttpPerf.Tests.Infrastructure;

namespace HttpPerf.Tests.Processes;

/// <summary>
/// LoadGen's open model against a tiny Kestrel server whose delays the test controls. Bounds are loose, and what they
/// allow for the machine is measured in the same test: these check that latency is measured the right way, not how
/// fast anything is.
/// </summary>
[Collection(Lanes.Processes)]
[Trait(Kind.Name, Kind.Processes)]
public sealed class OpenModelTests : IAsyncLifetime
{
    private WebApplication _server = null!;
    private HttpClient _client = null!;
    private volatile TaskCompletionSource _gate = Opened();

    public async ValueTask InitializeAsync()
    {
        var builder = WebApplication.CreateSlimBuilder();
        builder.WebHost.UseUrls("http://127.0.0.1:0");
        builder.Logging.ClearProviders();
        _server = builder.Build();
        _server.MapGet("/delay/{ms:int}", async (int ms) => { await Task.Delay(ms); return Results.Ok(); });
        // 50 ms of work once the gate is open: 40 requests at concurrency 2 take about a second.
        _server.MapGet("/gated", async () => { await _gate.Task; await Task.Delay(50); return Results.Ok(); });
        // Headers (and a first chunk) after about 100 ms, the rest of the body about 300 ms later.
        _server.MapGet("/slow-body", async (HttpContext context) =>
        {
            await Task.Delay(100);
            await context.Response.StartAsync();
            await context.Response.WriteAsync("[");
            await context.Response.Body.FlushAsync();
            await Task.Delay(300);
            await context.Response.WriteAsync("]");
        });
        await _server.StartAsync();
        var address = _server.Services.GetRequiredService<IServer>().Features.GetRequiredFeature<IServerAddressesFeature>().Addresses.First();
        _client = new HttpClient { BaseAddress = new Uri(address) };
    }

    public async ValueTask DisposeAsync()
    {
        _client.Dispose();
        await _server.DisposeAsync();
    }

    [Fact]
    public async Task A_known_delay_shows_in_the_median()
    {
        // Delayed and undelayed requests interleaved in one run: what the machine adds (an open model counts a send
        // that starts late from when it was due) lands on both, and the difference is the delay. Measured apart, a
        // loaded machine's median of the delayed ones alone once reached 731 ms (CI run 36).
        var runner = new OpenModelRunner(_client, i => i % 2 == 0
            ? ("delayed", new HttpRequestMessage(HttpMethod.Get, "/delay/100"))
            : ("undelayed", new HttpRequestMessage(HttpMethod.Get, "/delay/0")), maxInFlight: 50);
        runner.Rate.PerSecond = 20;

        var stats = await runner.RunAsync(TimeSpan.FromSeconds(2), Cancel);
        var (delayed, undelayed) = (stats["delayed"], stats["undelayed"]);

        Assert.InRange(delayed.Count + undelayed.Count, 35, 45);
        Assert.Equal(0, delayed.Errors + undelayed.Errors);
        // Timers may fire a millisecond early, so the lower bound leaves room under the 100 ms delay.
        Assert.InRange(delayed.PercentileMs(50) - undelayed.PercentileMs(50), 90, 400);
    }

    [Fact]
    public async Task Time_to_first_byte_is_measured_apart_from_the_whole_response()
    {
        var undelayed = await UndelayedMedianMsAsync();
        var stats = (await LoadRunner.RunAsync(_client, "/slow-body", ["optimized"], requests: 4, concurrency: 2, Cancel))[0];

        Assert.Equal(0, stats.Errors);
        // Headers arrive after about 100 ms and the body about 300 ms later (timers may fire a little early).
        var firstByte = stats.FirstBytePercentileMs(50);
        var whole = stats.PercentileMs(50);
        Assert.InRange(firstByte, 80, 300 + 2 * undelayed);
        Assert.InRange(whole, 360, 900 + 2 * undelayed);
        Assert.True(whole - firstByte >= 250, $"first byte {firstByte} ms, whole {whole} ms: the body wait is not apart");
    }

    [Fact]
    public async Task A_stalled_server_raises_the_measured_latency_where_a_closed_loop_hides_it()
    {
        // Open model: the server stalls for one second in the middle of a two-second run.
        var runner = new OpenModelRunner(_client, _ => ("optimized", new HttpRequestMessage(HttpMethod.Get, "/gated")), maxInFlight: 2);
        runner.Rate.PerSecond = 20;
        var open = runner.RunAsync(TimeSpan.FromSeconds(2), Cancel);
        await StallAsync(after: TimeSpan.FromMilliseconds(500), forHowLong: TimeSpan.FromSeconds(1));
        var openStats = (await open)["optimized"];

        // Closed loop, first with no stall (what a request takes on this machine), then the same stall: only the requests
        // in flight when it starts see it.
        var calm = (await LoadRunner.RunAsync(_client, "/gated", ["optimized"], requests: 40, concurrency: 2, Cancel))[0];
        var closed = LoadRunner.RunAsync(_client, "/gated", ["optimized"], requests: 40, concurrency: 2, Cancel);
        await StallAsync(after: TimeSpan.FromMilliseconds(100), forHowLong: TimeSpan.FromSeconds(1));
        var closedStats = (await closed)[0];

        Assert.Equal(0, openStats.Errors);
        Assert.InRange(openStats.PercentileMs(75), 300, 3_000);
        // The closed loop did meet the stall (its slowest requests waited it out), yet its p75 barely moves.
        Assert.True(closedStats.PercentileMs(100) >= 800, $"closed loop max {closedStats.PercentileMs(100)} ms: the stall was missed");
        Assert.True(closedStats.PercentileMs(75) < calm.PercentileMs(75) + 150, $"closed loop p75 {closedStats.PercentileMs(75)} ms, {calm.PercentileMs(75)} ms with no stall");
    }

    [Fact]
    public async Task The_rate_can_change_while_it_runs()
    {
        var runner = new OpenModelRunner(_client, _ => ("optimized", new HttpRequestMessage(HttpMethod.Get, "/delay/1")), maxInFlight: 50);
        runner.Rate.PerSecond = 10;
        var duration = TimeSpan.FromSeconds(3);
        var clock = Stopwatch.StartNew();
        var run = runner.RunAsync(duration, Cancel);

        await Task.Delay(TimeSpan.FromSeconds(1), Cancel);
        var changed = clock.Elapsed;
        runner.Rate.PerSecond = 40;
        var stats = (await run)["optimized"];

        // 10 a second until the change, about a second in (a busy machine wakes the delay later), then 40: 90, not 30.
        var expected = Arrivals(10, 40, changed, duration);
        Assert.InRange(stats.Count, expected * 0.85 - 2, expected * 1.15 + 2);
    }

    /// <summary>How many requests a run of <paramref name="duration"/> sends at <paramref name="before"/> a second, then <paramref name="after"/> from <paramref name="changed"/> on.</summary>
    internal static double Arrivals(double before, double after, TimeSpan changed, TimeSpan duration)
    {
        var at = Math.Clamp(changed.TotalSeconds, 0, duration.TotalSeconds);
        return before * at + after * (duration.TotalSeconds - at);
    }

    /// <summary>
    /// The median of requests with no delay, which also warms the client and the server: what a request takes on this
    /// machine, added twice to an upper bound (a cold test process in a sixth of a core measured 3.5 s for the 100 ms delay).
    /// </summary>
    private async Task<double> UndelayedMedianMsAsync() =>
        (await LoadRunner.RunAsync(_client, "/delay/0", ["optimized"], requests: 20, concurrency: 2, Cancel))[0].PercentileMs(50);

    private async Task StallAsync(TimeSpan after, TimeSpan forHowLong)
    {
        await Task.Delay(after, Cancel);
        var gate = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        _gate = gate;
        await Task.Delay(forHowLong, Cancel);
        _gate = Opened();
        gate.SetResult();
    }

    private static TaskCompletionSource Opened()
    {
        var opened = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        opened.SetResult();
        return opened;
    }
}

/// <summary>LoadGen's control endpoint and metrics during an open-model run.</summary>
[Collection(Lanes.Processes)]
[Trait(Kind.Name, Kind.Processes)]
public sealed class LoadControlTests
{
    [Fact]
    public async Task Put_rate_and_mode_change_a_running_load_and_bad_values_are_400_problems()
    {
        await using var telemetry = await Infrastructure.OtlpReceiver.StartAsync();
        var target = WebApplication.CreateSlimBuilder();
        target.WebHost.UseUrls("http://127.0.0.1:0");
        target.Logging.ClearProviders();
        await using var server = target.Build();
        server.MapGet("/fast", () => Results.Ok());
        await server.StartAsync(Cancel);
        using var client = new HttpClient { BaseAddress = new Uri(server.Services.GetRequiredService<IServer>().Features.GetRequiredFeature<IServerAddressesFeature>().Addresses.First()) };

        var runner = new OpenModelRunner(client, i => (i % 2 == 0 ? "naive" : "optimized", new HttpRequestMessage(HttpMethod.Get, "/fast")), maxInFlight: 20).WithMetrics();
        runner.Rate.PerSecond = 5;
        var modes = new ModeControl([ModeControl.Both]);
        await using var control = await LoadGen.Control.LoadControlHost.StartAsync(new LoadGen.Control.LoadControl(runner, modes, client, new DownloadFile(client, 1024)), "http://127.0.0.1:0",
            telemetry.ExporterEnvironment.ToDictionary(e => e.Key, e => (string?)e.Value), Cancel);
        using var controlClient = new HttpClient { BaseAddress = new Uri(control.Services.GetRequiredService<IServer>().Features.GetRequiredFeature<IServerAddressesFeature>().Addresses.First()) };
        var duration = TimeSpan.FromSeconds(3);
        var clock = Stopwatch.StartNew();
        var run = runner.RunAsync(duration, Cancel);

        await Task.Delay(TimeSpan.FromSeconds(1), Cancel);
        var sent = clock.Elapsed;
        using (var set = await controlClient.PutAsJsonAsync("/rate", 40.0, Cancel))
        {
            Assert.Equal(System.Net.HttpStatusCode.NoContent, set.StatusCode);
        }

        var answered = clock.Elapsed;

        Assert.Equal(40.0, await controlClient.GetFromJsonAsync<double>("/rate", Cancel));
        foreach (var bad in new[] { "0", "-3", "20000", "\"fast\"" })
        {
            using var rejected = await controlClient.PutAsync("/rate", new StringContent(bad, System.Text.Encoding.UTF8, "application/json"), Cancel);
            Assert.Equal(System.Net.HttpStatusCode.BadRequest, rejected.StatusCode);
        }

        Assert.Equal("both", await controlClient.GetFromJsonAsync<string>("/mode", Cancel));
        using (var set = await controlClient.PutAsJsonAsync("/mode", "flags", Cancel))
        {
            Assert.Equal(System.Net.HttpStatusCode.NoContent, set.StatusCode);
        }

        Assert.Equal(["flags"], modes.Modes);
        Assert.Equal("flags", await controlClient.GetFromJsonAsync<string>("/mode", Cancel));
        using (var rejected = await controlClient.PutAsJsonAsync("/mode", "fastest", Cancel))
        {
            Assert.Equal(System.Net.HttpStatusCode.BadRequest, rejected.StatusCode);
        }

        var stats = await run;
        // 5 a second until the change, which came between the PUT's send and its answer (a first request to the control
        // endpoint on a busy machine takes its time), then 40: about 85, far from the 15 the first rate gives.
        Assert.InRange(stats.Values.Sum(s => s.Count), OpenModelTests.Arrivals(5, 40, answered, duration) * 0.85 - 2, OpenModelTests.Arrivals(5, 40, sent, duration) * 1.15 + 2);
        Assert.Equal(40.0, runner.Rate.PerSecond);
        Assert.True(await telemetry.WaitForAsync("metrics", TimeSpan.FromSeconds(10), "httpperf.loadgen.requests", "httpperf.loadgen.latency", "httpperf.loadgen.rate", "naive", "optimized"));
    }
}
