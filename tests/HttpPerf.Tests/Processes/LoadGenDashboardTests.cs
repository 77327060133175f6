using System.Globalization;
using System.Net.Http.Json;
using System.Net;
using System.Text.Json;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.ServiceDefaults;
using HttpPerf.Tests.Infrastructure;
using LoadGen.Control;
using LoadGen.Load;
using Microsoft.AspNetCore.Builder;

namespace HttpPerf.Tests.Processes;

/// <summary>
/// LoadGen as the AppHost runs it: an open-model run with its control endpoint, exporting to the in-test receiver as
/// the resource <c>loadgen</c>: its spans, <c>GET /status</c>, a run with no end, and <c>POST /measure</c>.
/// </summary>
[Collection(Lanes.Processes)]
[Trait(Kind.Name, Kind.Processes)]
public sealed class LoadGenDashboardTests(SmallSystemFixture fixture) : SystemTests<SmallSystemFixture>(fixture)
{
    [Fact]
    public async Task Each_request_is_a_span_named_for_its_scenario_and_route_lasting_until_its_last_body_byte()
    {
        var load = Scenario.Parse("products", [PerfMode.Optimized], uploadBytes: 1024);
        await using var control = await StartAsync(load, Fixture.Gateway);

        var stats = await LoadRunner.RunAsync(Fixture.Gateway, load.Next, requests: 3, concurrency: 1, Cancel);
        Assert.Equal(0, stats.Single().Errors);

        // Each root span of LoadGen's, with the Gateway's server span in the same trace.
        var receiver = Fixture.Telemetry;
        List<(SpanRecord Root, SpanRecord Gateway)> traces = [];
        var deadline = DateTime.UtcNow.AddSeconds(20);
        while (traces.Count < 3 && DateTime.UtcNow < deadline)
        {
            await Task.Delay(200, Cancel);
            var spans = receiver.Spans();
            traces = spans.Where(s => s.Service == SystemContract.LoadGen && s.ParentSpanId == "" && s.Name == "products GET /api/products")
                .SelectMany(root => spans.Where(s => s.Service == "gateway" && s.TraceId == root.TraceId && s.Name == "GET /api/products/{**rest}").Select(gateway => (root, gateway)))
                .ToList();
        }

        Assert.Equal(3, traces.Count);
        var all = receiver.Spans();
        // Until the last body byte, not the headers: at least 90% of the fastest of these exchanges as LoadGen timed them
        // to their last byte, in the same process. Not held to the Gateway's server span, which ends after the Gateway's
        // own work past its last write (it logs the exchange inside its span, StreamingExchangeLogger), and which a busy
        // machine stretches: a fresh-clone CI saw LoadGen's span end 0.8 ms before it, on an 11 ms product list.
        var timed = stats.Single();
        var fastest = TimeSpan.FromMilliseconds(timed.PercentileMs(0));
        foreach (var (root, gateway) in traces)
        {
            Assert.True(root.Duration >= fastest * 0.9, $"LoadGen's span {root.Duration.TotalMilliseconds} ms; the fastest exchange {fastest.TotalMilliseconds} ms to its last byte, {timed.FirstBytePercentileMs(0)} ms to its headers; the Gateway's span {gateway.Duration.TotalMilliseconds} ms");
            Assert.Equal("/api/products", root["url.template"]);
            Assert.Equal(PerfMode.Optimized, root["perf.mode"]);

            // The platform's HttpClient span stays as it is, under LoadGen's, and ends with the headers.
            var client = Assert.Single(all, s => s.Service == SystemContract.LoadGen && s.ParentSpanId == root.SpanId);
            Assert.Equal("GET", client.Name);
            Assert.True(client.End <= root.End);
        }
    }

    [Fact]
    public async Task A_run_with_no_end_sends_until_stopped_and_its_status_says_what_it_does()
    {
        var (load, runner) = CatalogLoad(perSecond: 5);
        await using var control = await StartAsync(load, Fixture.Gateway, runner);
        using var client = new HttpClient { BaseAddress = new Uri(control.Urls.First()) };
        using var stop = CancellationTokenSource.CreateLinkedTokenSource(Cancel);

        var before = await client.GetFromJsonAsync<LoadStatus>("/status", JsonSerializerOptions.Web, Cancel);
        Assert.False(before!.Running);
        Assert.Equal(0, before.Requests);

        var run = runner.RunAsync(duration: null, stop.Token);
        LoadStatus status;
        do
        {
            await Task.Delay(200, Cancel);
            status = (await client.GetFromJsonAsync<LoadStatus>("/status", JsonSerializerOptions.Web, Cancel))!;
        }
        while (status.Requests < 5 && !run.IsCompleted);

        Assert.True(status.Running);
        Assert.Null(status.Until);
        Assert.InRange(status.RunningSince!.Value, DateTimeOffset.UtcNow.AddMinutes(-1), DateTimeOffset.UtcNow);
        Assert.Equal((5.0, ModeControl.FollowFlags, 0L), (status.Rate, status.Mode, status.Errors));
        var catalog = Assert.Single(status.Scenarios);
        Assert.Equal(("catalog", ModeControl.FollowFlags), (catalog.Scenario, catalog.Mode));
        Assert.True(catalog.P50Ms > 0);
        Assert.True(catalog.ServedBy.GetValueOrDefault(PerfMode.Optimized) > 0);

        // The rate changes live; the run goes on until told to stop.
        using (var response = await client.PutAsJsonAsync("/rate", 10.0, Cancel))
        {
            Assert.Equal(HttpStatusCode.NoContent, response.StatusCode);
        }

        Assert.Equal(10.0, (await client.GetFromJsonAsync<LoadStatus>("/status", JsonSerializerOptions.Web, Cancel))!.Rate);
        Assert.False(run.IsCompleted);
        await stop.CancelAsync();
        var results = await run.WaitAsync(TimeSpan.FromSeconds(10), Cancel);

        Assert.True(results.Values.Sum(s => s.Count) >= 5);
        Assert.False((await client.GetFromJsonAsync<LoadStatus>("/status", JsonSerializerOptions.Web, Cancel))!.Running);
    }

    [Fact]
    public async Task The_run_command_takes_infinite_for_a_run_that_ends_when_cancelled()
    {
        var root = new System.CommandLine.RootCommand { LoadGen.Commands.RunCommand.Create() };
        Assert.NotEmpty(root.Parse(["run", "--duration", "soon"]).Errors);
        Assert.NotEmpty(root.Parse(["run", "--duration", "-00:00:01"]).Errors);
        Assert.Empty(root.Parse(["run", "--duration", "infinite"]).Errors);

        var started = DateTime.UtcNow;
        using var stop = CancellationTokenSource.CreateLinkedTokenSource(Cancel);
        stop.CancelAfter(TimeSpan.FromSeconds(3));
        var exitCode = await root.Parse(["run", "--url", Fixture.System.Gateway.BaseAddress.ToString(), "--scenario", "catalog", "--mode", "flags", "--rate", "5", "--duration", "infinite"])
            .InvokeAsync(cancellationToken: stop.Token);

        Assert.Equal(0, exitCode);
        // It sent until cancelled (timers may fire a few ms early), then ended promptly.
        Assert.InRange(DateTime.UtcNow - started, TimeSpan.FromSeconds(2.9), TimeSpan.FromSeconds(15));
    }

    [Fact]
    public async Task Measure_now_answers_naive_and_optimized_p50_p99_and_ratios_with_or_without_the_live_load()
    {
        var (load, runner) = CatalogLoad(perSecond: 4);
        await using var control = await StartAsync(load, Fixture.Gateway, runner);
        using var client = new HttpClient { BaseAddress = new Uri(control.Urls.First()), Timeout = TimeSpan.FromSeconds(60) };

        // No live load yet.
        var started = DateTime.UtcNow;
        AssertTable(await MeasureAsync(client, "export"), "export GET /api/catalog/export");

        // The measurement's look at the Gateway's health is a probe: out of traces, as YARP's health checks are.
        // Ours: this LoadGen's, to this system's Gateway. LoadGen runs in the test process, whose HttpClient spans it sees
        // all of, so a span of another test's request (another lane's, Lanes.cs) is not its own.
        var gateway = Fixture.Gateway.BaseAddress!.GetLeftPart(UriPartial.Authority);
        bool Ours(SpanRecord s) => s.Service == SystemContract.LoadGen && s.Start >= started
            && (s["url.full"] is not { } url || url.StartsWith(gateway, StringComparison.Ordinal));
        Assert.True(await Poll.UntilAsync(() => Fixture.Telemetry.Spans().Any(s => Ours(s) && s.Name == "POST /measure"), TimeSpan.FromSeconds(10)),
            "LoadGen's span of POST /measure was not exported");
        Assert.DoesNotContain(Fixture.Telemetry.Spans(), s => Ours(s)
            && (s.Name.Contains(SystemContract.HealthPath, StringComparison.Ordinal) || s["url.full"]?.EndsWith(SystemContract.HealthPath, StringComparison.Ordinal) == true));

        // Beside the live load, which goes on.
        using var stop = CancellationTokenSource.CreateLinkedTokenSource(Cancel);
        var run = runner.RunAsync(duration: null, stop.Token);
        var table = await MeasureAsync(client, "catalog");
        var during = (await client.GetFromJsonAsync<LoadStatus>("/status", JsonSerializerOptions.Web, Cancel))!;
        await stop.CancelAsync();
        await run.WaitAsync(TimeSpan.FromSeconds(10), Cancel);

        AssertTable(table, "catalog GET /api/catalog/products");
        Assert.True(during.Running && during.Requests >= 10, $"{during.Requests} live requests during a measurement of about 8 s at 4/s");
    }

    [Fact]
    public async Task Repeated_measurements_of_downloads_and_uploads_store_one_file_for_the_run_which_goes_when_the_run_ends()
    {
        var before = Fixture.System.StoredUploads();
        var started = DateTime.UtcNow;
        var load = Scenario.Parse("catalog", [PerfMode.Optimized], uploadBytes: 1024);
        // 2 MiB: long enough that the table's rounded milliseconds give its ratios to 2%.
        var download = new DownloadFile(Fixture.Gateway, 2 << 20);
        IReadOnlyList<string> duringRun;
        await using (var control = await StartAsync(load, Fixture.Gateway, download: download))
        {
            using var client = new HttpClient { BaseAddress = new Uri(control.Urls.First()), Timeout = TimeSpan.FromSeconds(60) };
            AssertTable(await MeasureAsync(client, "download"), "download GET /api/uploads/{id}");
            duringRun = Fixture.System.StoredUploads();
            Assert.Single(duringRun.Except(before));

            // Again, and the uploads measured (each deleted once acknowledged): the folder holds the same files.
            AssertTable(await MeasureAsync(client, "download"), "download GET /api/uploads/{id}");
            AssertTable(await MeasureAsync(client, "upload"), "upload POST /api/uploads");
            AssertTable(await MeasureAsync(client, "upload"), "upload POST /api/uploads");
            Assert.Equal(duringRun, Fixture.System.StoredUploads());
        }

        // One audit record per measurement, with its ratios.
        bool Measured(LogRecord r) => r.Service == SystemContract.LoadGen && r.Category == SystemContract.AuditCategory && r.Time >= started;
        Assert.True(await Poll.UntilAsync(() => Fixture.Telemetry.Logs().Count(Measured) >= 4, TimeSpan.FromSeconds(10)));
        await Task.Delay(TimeSpan.FromSeconds(2), Cancel);
        var measured = Fixture.Telemetry.Logs().Where(Measured).OrderBy(r => r.Time).ToList();
        Assert.Equal(["download", "download", "upload", "upload"], measured.Select(r => r["Scenarios"]));
        Assert.All(measured, r => Assert.Matches(@"^(download|upload) \d+\.\d\d$", r["P50Ratios"]!));

        // The run ends (RunCommand disposes its DownloadFile): its file goes too.
        await download.DisposeAsync();
        Assert.Equal(before, Fixture.System.StoredUploads());
    }

    [Fact]
    public async Task Measure_now_refuses_when_the_gateway_is_not_healthy_or_the_scenario_is_unknown()
    {
        var load = Scenario.Parse("catalog", [PerfMode.Optimized], uploadBytes: 1024);
        using var nowhere = new HttpClient { BaseAddress = new Uri("http://127.0.0.1:9") };
        await using var control = await StartAsync(load, nowhere);
        using var client = new HttpClient { BaseAddress = new Uri(control.Urls.First()) };

        using var unhealthy = await client.PostAsync("/measure", null, Cancel);
        Assert.Equal(HttpStatusCode.ServiceUnavailable, unhealthy.StatusCode);
        var problem = await unhealthy.Content.ReadFromJsonAsync<Http.ProblemDocument>(Cancel);
        Assert.Equal("The Gateway is not healthy, so nothing was measured.", problem!.Title);
        Assert.Contains("/health", problem.Detail, StringComparison.Ordinal);

        using var unknown = await client.PostAsync("/measure?scenario=teleport", null, Cancel);
        Assert.Equal(HttpStatusCode.BadRequest, unknown.StatusCode);
    }

    private static async Task<string> MeasureAsync(HttpClient client, string scenario)
    {
        var started = DateTime.UtcNow;
        using var response = await client.PostAsync($"/measure?scenario={scenario}", null, Cancel);
        var body = await response.Content.ReadAsStringAsync(Cancel);
        Assert.True(response.IsSuccessStatusCode, body);
        Assert.Equal("text/markdown", response.Content.Headers.ContentType?.MediaType);
        Assert.True(DateTime.UtcNow - started < TimeSpan.FromSeconds(60), $"took {DateTime.UtcNow - started}");
        TestContext.Current.TestOutputHelper?.WriteLine(body);
        return body;
    }

    /// <summary>A naive row and an optimized row for the route, on as many requests, with p50s and the ratio of them.</summary>
    private static void AssertTable(string markdown, string route)
    {
        var rows = markdown.Split('\n')
            .Where(line => line.StartsWith('|') && !line.StartsWith("|---", StringComparison.Ordinal))
            .Select(line => line.Trim().Trim('|').Split('|').Select(cell => cell.Trim()).ToArray())
            .ToList();
        Assert.Equal(["route", "mode", "requests", "p50 ms", "p99 ms", "MB/s", "p50 optimized / naive", "its halves", "MB/s optimized / naive", "not counted"], rows[0]);
        var naive = Assert.Single(rows, r => r[0] == route);
        var optimized = rows[rows.IndexOf(naive) + 1];
        Assert.Equal((PerfMode.Naive, PerfMode.Optimized), (naive[1], optimized[1]));
        // Every request counted: nothing failed, nothing served in another mode.
        Assert.Equal(("", ""), (naive[9], optimized[9]));

        double Number(string cell) => double.Parse(cell.Replace(",", "", StringComparison.Ordinal), CultureInfo.InvariantCulture);
        Assert.True(Number(naive[2]) >= 1);
        Assert.Equal(naive[2], optimized[2]);
        var (naiveP50, optimizedP50) = (Number(naive[3]), Number(optimized[3]));
        Assert.True(naiveP50 > 0 && optimizedP50 > 0);
        Assert.True(Number(naive[4]) >= naiveP50 && Number(optimized[4]) >= optimizedP50);
        Assert.True(Number(naive[5]) > 0 && Number(optimized[5]) > 0);
        Assert.Equal(optimizedP50 / naiveP50, Number(optimized[6]), tolerance: 0.02 + optimizedP50 / naiveP50 * 0.02);

        // The spread: the ratio of the first half of the pairs and of the second, the whole run's between them (or near: a
        // median of the whole is not always between the medians of its halves, but within their range's rounding).
        var halves = optimized[7].Split(", ").Select(Number).ToList();
        Assert.Equal(2, halves.Count);
        Assert.True(Number(optimized[6]) >= halves.Min() * 0.8 && Number(optimized[6]) <= halves.Max() * 1.25, $"ratio {optimized[6]}, halves {optimized[7]}");
    }

    /// <summary>A live load of catalogs following the flags, not started.</summary>
    private (Scenario Load, OpenModelRunner Runner) CatalogLoad(double perSecond)
    {
        var load = Scenario.Parse("catalog", new ModeControl([ModeControl.FollowFlags]), uploadBytes: 1024);
        var runner = new OpenModelRunner(Fixture.Gateway, load.Next, maxInFlight: 2);
        runner.Rate.PerSecond = perSecond;
        return (load, runner);
    }

    private async Task<WebApplication> StartAsync(Scenario load, HttpClient gateway, OpenModelRunner? runner = null, DownloadFile? download = null)
    {
        var configuration = Fixture.Telemetry.ExporterEnvironment.ToDictionary(e => e.Key, e => (string?)e.Value);
        configuration["OTEL_SERVICE_NAME"] = SystemContract.LoadGen;
        runner ??= new OpenModelRunner(gateway, load.Next, maxInFlight: 1);
        return await LoadControlHost.StartAsync(new LoadControl(runner, load.Modes, gateway, download ?? new DownloadFile(gateway, 1024)), "http://127.0.0.1:0", configuration, Cancel);
    }
}
