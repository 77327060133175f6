using System.Diagnostics;
using System.Net.Http.Json;
using System.Text.Json;
using Aspire.Hosting.ApplicationModel;
using Aspire.Hosting.Testing;
using Aspire.Hosting;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.ServiceDefaults;
using HttpPerf.Tests.Infrastructure;
using Microsoft.Extensions.Diagnostics.HealthChecks;

namespace HttpPerf.Tests.AppHost;

/// <summary>
/// The AppHost as a user runs it: its resources, its dashboard commands and the Gateway it puts in front, one
/// instance for the class (each test leaves the flags as it found them).
/// </summary>
[Collection(Lanes.Orchestrated)]
[Trait(Kind.Name, Kind.AppHost)]
public sealed class AppHostTests(AppHostFixture system) : IClassFixture<AppHostFixture>
{
    [Fact]
    public async Task Services_become_healthy_and_LoadGen_waits_to_be_started()
    {
        foreach (var name in AppHostFixture.ServiceNames)
        {
            Assert.True(system.App.ResourceNotifications.TryGetCurrentState(name, out var state), name);
            Assert.Equal(KnownResourceStates.Running, state.Snapshot.State?.Text);
            Assert.Equal(HealthStatus.Healthy, state.Snapshot.HealthStatus);
        }

        Assert.Equal(KnownResourceStates.NotStarted, system.LoadGenStateAtStart);
        using var live = await system.Gateway.GetAsync("/api/products", Cancel);
        Assert.Equal(200, (int)live.StatusCode);
    }

    [Fact]
    public void Each_service_calls_what_the_contract_says_straight_at_its_Kestrel()
    {
        // Read from the processes themselves: what DCP really handed each service.
        var environments = AppHostFixture.ServiceNames.ToDictionary(name => name, name => ProcessTree.Environment(system.ProcessIds[name]));
        foreach (var spec in SystemContract.Services)
        {
            // One address per replica and listener (HTTP/1.1 and HTTP/2): the Catalog runs two replicas in process
            // mode (catalog, catalog-2), the rest one.
            string[] listeners = [SystemContract.HttpEndpoint, SystemContract.Http2Endpoint];
            var addresses = environments[spec.Name].Keys.Where(k => k.StartsWith("services__", StringComparison.Ordinal)).Order().ToList();
            Assert.Equal(
                [.. spec.Calls.SelectMany(c => Enumerable.Range(0, c == SystemContract.Catalog ? 2 : 1).SelectMany(i => listeners.Select(l => SystemContract.ServiceAddress(c, i, l)))).Order()],
                addresses);
            foreach (var called in spec.Calls)
            {
                // No DCP proxy between them: the address called is the one the service's listener of that name binds, as
                // the platform's setting says (ASPNETCORE_URLS) and, for HTTP/2, Http2__Port on the same host.
                var http = environments[called]["ASPNETCORE_URLS"];
                var bound = new Dictionary<string, string>
                {
                    [SystemContract.HttpEndpoint] = http,
                    [SystemContract.Http2Endpoint] = new UriBuilder(http) { Port = int.Parse(environments[called][SystemContract.Http2Port], System.Globalization.CultureInfo.InvariantCulture) }.Uri.ToString(),
                };
                foreach (var listener in listeners)
                {
                    Assert.Equal(bound[listener].TrimEnd('/'), environments[spec.Name][SystemContract.ServiceAddress(called, 0, listener)].TrimEnd('/'));
                }
            }

            Assert.Equal(system.FlagsFile, environments[spec.Name][SystemContract.FlagsFile]);
        }
    }

    [Fact]
    public async Task Every_mode_forced_by_header_returns_the_same_bytes_through_the_Gateway() =>
        await EveryRung.AssertSameBytesAsync(system.Gateway);

    [Fact]
    public async Task Every_flag_command_changes_what_the_Gateway_serves_within_2_s_and_no_other_flag()
    {
        var upload = await UploadAsync("flags"u8.ToArray(), mode: null);
        var expected = await FlagsAsync();
        var changes = new List<string>();
        var started = DateTime.UtcNow;
        try
        {
            foreach (var pitfall in Pitfalls.All)
            {
                foreach (var variant in pitfall.Variants.Select(v => v.Name).Append(PerfMode.Optimized))
                {
                    var result = await system.Commands.ExecuteCommandAsync(pitfall.Service, $"{pitfall.Flag}-{variant}", Cancel);
                    Assert.True(result.Success, $"{pitfall.Flag}-{variant}: {result.Message}");
                    if (expected[pitfall.Flag] != variant)
                    {
                        changes.Add($"{pitfall.Flag} {expected[pitfall.Flag]} -> {variant}");
                    }

                    expected[pitfall.Flag] = variant;
                    await AssertServedWithinAsync(pitfall.Flag, variant, upload.Id);
                    Assert.Equal(expected, await FlagsAsync());
                }
            }

            foreach (var variant in PerfMode.All.Append(PerfMode.Optimized))
            {
                var result = await system.Commands.ExecuteCommandAsync(SystemContract.Gateway, $"all-flags-{variant}", Cancel);
                Assert.True(result.Success, $"all-flags-{variant}: {result.Message}");
                foreach (var pitfall in Pitfalls.All)
                {
                    if (expected[pitfall.Flag] != pitfall.Serving(variant))
                    {
                        changes.Add($"{pitfall.Flag} {expected[pitfall.Flag]} -> {pitfall.Serving(variant)}");
                    }

                    expected[pitfall.Flag] = pitfall.Serving(variant);
                    await AssertServedWithinAsync(pitfall.Flag, pitfall.Serving(variant), upload.Id);
                }

                Assert.Equal(expected, await FlagsAsync());
            }

            // Each change a command made is one audit record in the Gateway's structured logs, naming the dashboard.
            IReadOnlyList<DashboardLogs.Log> audit = [];
            await UntilAsync(async () => (audit = await AuditSinceAsync(started)).Count >= changes.Count, TimeSpan.FromSeconds(30));
            await Task.Delay(TimeSpan.FromSeconds(2), Cancel);
            audit = await AuditSinceAsync(started);
            var recorded = audit.Select(r => $"{r["Flag"]} {r["Old"]} -> {r["New"]}").ToList();
            Assert.True(changes.Order().SequenceEqual(recorded.Order()), $"changes:{Environment.NewLine}{string.Join(Environment.NewLine, changes)}{Environment.NewLine}audit records:{Environment.NewLine}{string.Join(Environment.NewLine, audit.Select(r => $"{r.Time:HH:mm:ss.fff} {r.Body}"))}");
            Assert.All(audit, r => Assert.Equal(("dashboard-command", SystemContract.AuditCategory), (r["Source"], r.Category)));

            // Each record's Trace link opens a trace the dashboard holds: the admin request that made the change.
            foreach (var traceId in audit.Select(r => r.TraceId).Distinct())
            {
                await AssertTraceHeldAsync(traceId, SystemContract.Gateway, "/admin/flags");
            }
        }
        finally
        {
            await system.Commands.ExecuteCommandAsync(SystemContract.Gateway, $"all-flags-{PerfMode.Optimized}", Cancel);
        }
    }

    private async Task<IReadOnlyList<DashboardLogs.Log>> AuditSinceAsync(DateTime since) => [.. (await AuditLogsAsync()).Where(l => l.Time >= since)];

    private async Task<IReadOnlyList<DashboardLogs.Log>> AuditLogsAsync()
    {
        using var dashboard = new HttpClient { BaseAddress = system.Dashboard };
        dashboard.DefaultRequestHeaders.Add("x-api-key", system.DashboardApiKey);
        return [.. (await DashboardLogs.GetAsync(dashboard, SystemContract.Gateway, "changed from", Cancel)).Where(l => l.Category == SystemContract.AuditCategory)];
    }

    [Fact]
    public async Task A_command_the_admin_API_refuses_reports_failure_with_a_message()
    {
        // The flags file exists once a flag has been changed: this test may be the class's first, and then it has none.
        var original = File.Exists(system.FlagsFile) ? await File.ReadAllTextAsync(system.FlagsFile, Cancel) : null;
        await File.WriteAllTextAsync(system.FlagsFile, "{ this is not json", Cancel);
        try
        {
            var result = await system.Commands.ExecuteCommandAsync(SystemContract.Catalog, $"{Pitfalls.CatalogSerialization}-{PerfMode.Naive}", Cancel);
            Assert.False(result.Success);
            Assert.Contains("503", result.Message, StringComparison.Ordinal);
            Assert.Equal("{ this is not json", await File.ReadAllTextAsync(system.FlagsFile, Cancel));
        }
        finally
        {
            if (original is null)
            {
                File.Delete(system.FlagsFile);
            }
            else
            {
                await File.WriteAllTextAsync(system.FlagsFile, original, Cancel);
            }
        }

        // And once the file parses again, the same command goes through.
        ExecuteCommandResult? again = null;
        var succeeded = await UntilAsync(async () => (again = await system.Commands.ExecuteCommandAsync(SystemContract.Catalog, $"{Pitfalls.CatalogSerialization}-{PerfMode.Optimized}", Cancel)).Success, TimeSpan.FromSeconds(10));
        Assert.True(succeeded, again?.Message);
    }

    [Fact]
    public async Task LoadGen_started_from_its_command_follows_the_flags_and_takes_rate_and_mode_live()
    {
        var start = await system.Commands.ExecuteCommandAsync(SystemContract.LoadGen, KnownResourceCommands.StartCommand, Cancel);
        Assert.True(start.Success, start.Message);
        try
        {
            using (var running = new CancellationTokenSource(TimeSpan.FromMinutes(2)))
            {
                await system.App.ResourceNotifications.WaitForResourceAsync(SystemContract.LoadGen, KnownResourceStates.Running, running.Token);
            }

            // Running is the process started; its control endpoint listens a moment later.
            using var control = system.App.CreateHttpClient(SystemContract.LoadGen, "control");
            Assert.True(await UntilAsync(async () => (await control.GetAsync("/rate", Cancel)).IsSuccessStatusCode, TimeSpan.FromSeconds(30)), "LoadGen's control endpoint did not answer in 30 s");

            // Following the flags: what the Gateway saw served is what the flags file says.
            var naive = await system.Commands.ExecuteCommandAsync(SystemContract.Catalog, $"{Pitfalls.CatalogSerialization}-{PerfMode.Naive}", Cancel);
            Assert.True(naive.Success, naive.Message);
            await WaitForLiveAsync(routes => routes.Any(r => r.Route == "catalog" && r.ServedBy.Contains($"{Pitfalls.CatalogSerialization}={PerfMode.Naive}", StringComparison.Ordinal)), "catalog served naive, as the flag says");

            var rate = await system.Commands.ExecuteCommandAsync(SystemContract.LoadGen, "rate-5", Cancel);
            Assert.True(rate.Success, rate.Message);
            Assert.Equal(5.0, await control.GetFromJsonAsync<double>("/rate", Cancel));

            var ab = await system.Commands.ExecuteCommandAsync(SystemContract.LoadGen, "mode-ab", Cancel);
            Assert.True(ab.Success, ab.Message);
            Assert.Equal("both", await control.GetFromJsonAsync<string>("/mode", Cancel));
            await system.Commands.ExecuteCommandAsync(SystemContract.Catalog, $"{Pitfalls.CatalogSerialization}-{PerfMode.Optimized}", Cancel);
            await WaitForLiveAsync(routes => routes.Any(r => r.Route == "products" && r.Variant == PerfMode.Naive && r.Requests > 0)
                                          && routes.Any(r => r.Route == "products" && r.Variant == PerfMode.Optimized && r.Requests > 0), "products both naive and optimized, by header");

            // What it does shows on the resource itself: rate, mode, requests sent and errors.
            Assert.True(await UntilAsync(() => Task.FromResult(
                system.App.ResourceNotifications.TryGetCurrentState(SystemContract.LoadGen, out var state)
                && Property(state, "loadgen.rate") == "5/s" && Property(state, "loadgen.mode") == "both"
                && Convert.ToInt64(Property(state, "loadgen.requests"), System.Globalization.CultureInfo.InvariantCulture) > 0
                && Property(state, "loadgen.errors") is not null), TimeSpan.FromSeconds(30)), "LoadGen's rate, mode, requests and errors not shown as resource properties in 30 s");
            // And on the Resources page without a click: the text of its /status link, in the URLs column.
            Assert.True(await UntilAsync(() => Task.FromResult(
                system.App.ResourceNotifications.TryGetCurrentState(SystemContract.LoadGen, out var state)
                && state.Snapshot.Urls.Any(u => u.Url.EndsWith(SystemContract.StatusPath, StringComparison.Ordinal) && !u.IsInactive
                    && u.DisplayProperties.DisplayName.StartsWith("LoadGen: 5/s, both, ", StringComparison.Ordinal))), TimeSpan.FromSeconds(30)),
                "LoadGen's /status link does not say its rate and mode");

            // "A/B: measure now" answers with a table, beside the live load.
            var measured = await system.Commands.ExecuteCommandAsync(SystemContract.LoadGen, "measure-ab", Cancel);
            Assert.True(measured.Success, measured.Message);
            Assert.Equal(CommandResultFormat.Markdown, measured.Data?.Format);
            Assert.True(measured.Data?.DisplayImmediately);
            var table = measured.Data!.Value;
            Assert.Contains("p50", table, StringComparison.Ordinal);
            Assert.Contains("optimized / naive", table, StringComparison.Ordinal);
            // A naive row that names the route, and under it the optimized row with p50 and the ratio.
            var lines = table.Split('\n');
            foreach (var route in new[] { "GET /api/products ", "GET /api/catalog/products " })
            {
                var naiveRow = Array.FindIndex(lines, line => line.Contains(route, StringComparison.Ordinal) && line.Contains("| naive |", StringComparison.Ordinal));
                Assert.True(naiveRow >= 0, $"no naive row for {route}: {table}");
                var optimizedRow = lines[naiveRow + 1].Split('|', StringSplitOptions.TrimEntries);
                Assert.Equal(PerfMode.Optimized, optimizedRow[2]);
                Assert.True(double.TryParse(optimizedRow[7], System.Globalization.CultureInfo.InvariantCulture, out var ratio) && ratio > 0, $"p50 ratio of {route}: {lines[naiveRow + 1]}");
            }

            // Its AbMeasured record's Trace link opens the measurement: LoadGen's /measure and the requests it sent.
            using var dashboard = new HttpClient { BaseAddress = system.Dashboard };
            dashboard.DefaultRequestHeaders.Add("x-api-key", system.DashboardApiKey);
            IReadOnlyList<DashboardLogs.Log> records = [];
            Assert.True(await UntilAsync(async () => (records = await DashboardLogs.GetAsync(dashboard, SystemContract.LoadGen, "A/B measured", Cancel)).Count > 0, TimeSpan.FromSeconds(20)), "no AbMeasured record");
            await AssertTraceHeldAsync(records[^1].TraceId, SystemContract.LoadGen, "/measure");
        }
        finally
        {
            await system.Commands.ExecuteCommandAsync(SystemContract.LoadGen, KnownResourceCommands.StopCommand, Cancel);
            await system.Commands.ExecuteCommandAsync(SystemContract.Gateway, $"all-flags-{PerfMode.Optimized}", Cancel);
        }
    }

    [Fact]
    public async Task After_a_naive_command_the_dashboard_holds_one_trace_across_gateway_frontend_and_catalog_naming_the_rung()
    {
        var command = await system.Commands.ExecuteCommandAsync(SystemContract.Frontend, $"{Pitfalls.FrontendCatalogClient}-{PerfMode.Naive}", Cancel);
        Assert.True(command.Success, command.Message);
        try
        {
            await AssertServedWithinAsync(Pitfalls.FrontendCatalogClient, PerfMode.Naive, uploadId: null);
            var traceId = ActivityTraceId.CreateRandom().ToHexString();
            using (var request = new HttpRequestMessage(HttpMethod.Get, "/api/products"))
            {
                request.Headers.Add("traceparent", $"00-{traceId}-{ActivitySpanId.CreateRandom().ToHexString()}-01");
                using var response = await system.Gateway.SendAsync(request, Cancel);
                Assert.Equal(200, (int)response.StatusCode);
                await response.Content.ReadAsByteArrayAsync(Cancel);
            }

            // The dashboard's own telemetry API (what `aspire otel spans` reads): the spans it received.
            using var dashboard = new HttpClient { BaseAddress = system.Dashboard };
            dashboard.DefaultRequestHeaders.Add("x-api-key", system.DashboardApiKey);
            IReadOnlyList<DashboardSpans.Span> spans = [];
            // Each service exports in batches of its own, so a service's client spans can arrive before its server span:
            // the wait is for every span asserted on below (the Gateway's and the Frontend's server spans, a Catalog span). 30 s
            // was once not enough beside the other lane (CI run 14: none of the trace's spans had arrived).
            await UntilAsync(async () => (spans = await DashboardSpans.GetAsync(dashboard, traceId, Cancel)).Any(IsGatewayServerSpan)
                && spans.Any(IsNaiveFrontendSpan) && spans.Any(span => span.Service == "catalog"), TimeSpan.FromSeconds(60));

            Assert.Equal(["catalog", "frontend", "gateway"], spans.Select(s => s.Service).Distinct().Order());
            Assert.True(spans.Any(IsNaiveFrontendSpan), $"no Frontend span says {Pitfalls.FrontendCatalogClient}={PerfMode.Naive} in 60 s: "
                + string.Join(", ", spans.Where(s => s.Service == "frontend").Select(s => $"{s.Name} ({s.Attributes.GetValueOrDefault("perf.variants") ?? "no perf.variants"})")));
            var gatewayServer = Assert.Single(spans, IsGatewayServerSpan);
            Assert.Contains(gatewayServer.Attributes.GetValueOrDefault("perf.mode"), new[] { PerfMode.Naive, "mixed" });
        }
        finally
        {
            await system.Commands.ExecuteCommandAsync(SystemContract.Frontend, $"{Pitfalls.FrontendCatalogClient}-{PerfMode.Optimized}", Cancel);
        }
    }

    // The Gateway's server span, the one ASP.NET Core names by route (YARP's proxy.forwarder span is of server kind too).
    /// <summary>The dashboard holds the trace <paramref name="traceId"/>, with a span of <paramref name="service"/> naming <paramref name="route"/>.</summary>
    private async Task AssertTraceHeldAsync(string traceId, string service, string route)
    {
        Assert.NotEqual("", traceId);
        using var dashboard = new HttpClient { BaseAddress = system.Dashboard };
        dashboard.DefaultRequestHeaders.Add("x-api-key", system.DashboardApiKey);
        IReadOnlyList<DashboardSpans.Span> spans = [];
        Assert.True(await UntilAsync(async () => (spans = await DashboardSpans.GetAsync(dashboard, traceId, Cancel))
            .Any(s => s.Service == service && s.Name.Contains(route, StringComparison.Ordinal)), TimeSpan.FromSeconds(20)),
            $"trace {traceId}: {spans.Count} spans ({string.Join(", ", spans.Select(s => $"{s.Service}: {s.Name}").Distinct())})");
    }

    private static bool IsNaiveFrontendSpan(DashboardSpans.Span span) =>
        span.Service == "frontend" && (span.Attributes.GetValueOrDefault("perf.variants") ?? "").Contains($"{Pitfalls.FrontendCatalogClient}={PerfMode.Naive}", StringComparison.Ordinal);

    private static bool IsGatewayServerSpan(DashboardSpans.Span span) =>
        span.Service == "gateway" && span.Kind == 2 && span.Name.StartsWith("GET /api/products", StringComparison.Ordinal);

    private static string? Property(ResourceEvent state, string name) =>
        state.Snapshot.Properties.FirstOrDefault(p => p.Name == name)?.Value?.ToString();

    /// <summary>Asks <paramref name="condition"/> every 250 ms until it holds (true) or <paramref name="timeout"/> has passed (false); a refused connection counts as not yet.</summary>
    private static Task<bool> UntilAsync(Func<Task<bool>> condition, TimeSpan timeout) =>
        Poll.UntilAsync(
            async () =>
            {
                try
                {
                    return await condition();
                }
                catch (HttpRequestException)
                {
                    return false; // not listening yet
                }
            },
            timeout,
            TimeSpan.FromMilliseconds(250));

    /// <summary>
    /// Polls the request that reaches <paramref name="flag"/> until <c>X-Perf-Variants</c> names <paramref name="variant"/>:
    /// a request sent 2 s or more after the first must. Judged by when a request was sent, not when its answer ended: a
    /// whole catalog on a busy machine can take longer than the 2 s itself.
    /// </summary>
    private async Task AssertServedWithinAsync(string flag, string variant, string? uploadId)
    {
        var wanted = $"{flag}={variant}";
        var clock = Stopwatch.StartNew();
        var served = "";
        var sent = TimeSpan.Zero;
        while (sent < TimeSpan.FromSeconds(2))
        {
            sent = clock.Elapsed;
            served = flag switch
            {
                Pitfalls.CatalogSerialization => (await Http.GetAsync(system.Gateway, "/api/catalog/products")).Variants,
                Pitfalls.CatalogWriteStrategy => (await Http.GetAsync(system.Gateway, "/api/catalog/export")).Variants,
                Pitfalls.UploadsReader => (await UploadWithVariantsAsync()).Variants,
                Pitfalls.UploadsDownload => (await Http.GetAsync(system.Gateway, $"/api/uploads/{uploadId}")).Variants,
                Pitfalls.FrontendGrpc => (await Http.GetAsync(system.Gateway, "/api/products/grpc")).Variants,
                Pitfalls.FrontendBlocking => (await Http.GetAsync(system.Gateway, "/api/products/1")).Variants,
                _ => (await Http.GetAsync(system.Gateway, "/api/products")).Variants,
            };
            if (served.Split(", ").Contains(wanted))
            {
                return;
            }

            await Task.Delay(50, Cancel);
        }

        Assert.Fail($"{wanted} not served to a request sent {sent.TotalSeconds:F1} s after the first: the Gateway answered X-Perf-Variants: {served}");
    }

    private async Task<Dictionary<string, string>> FlagsAsync()
    {
        using var request = new HttpRequestMessage(HttpMethod.Get, "/admin/flags");
        request.Headers.Add("X-Admin-Key", system.AdminKey);
        using var response = await system.Gateway.SendAsync(request, Cancel);
        response.EnsureSuccessStatusCode();
        var flags = await response.Content.ReadFromJsonAsync<List<FlagRow>>(Cancel);
        return flags!.ToDictionary(f => f.Flag, f => f.Variant);
    }

    private async Task<UploadReceipt> UploadAsync(byte[] file, string? mode) =>
        (await EveryRung.UploadAsync(system.Gateway, "/api/uploads", file, mode)).Receipt;

    private async Task<(UploadReceipt Receipt, string Variants)> UploadWithVariantsAsync() =>
        await EveryRung.UploadAsync(system.Gateway, "/api/uploads", "probe"u8.ToArray(), null);

    private async Task WaitForLiveAsync(Func<IReadOnlyList<LiveRoute>, bool> condition, string what)
    {
        IReadOnlyList<LiveRoute> routes = [];
        var seen = await UntilAsync(async () => condition(routes = (await system.Gateway.GetFromJsonAsync<LiveDocument>("/live", Cancel))!.Routes), TimeSpan.FromSeconds(45));
        Assert.True(seen, $"Not seen within 45 s: {what}. The Gateway's last minute: {JsonSerializer.Serialize(routes)}");
    }

    private sealed record FlagRow(string Flag, string Variant);

    private sealed record LiveDocument(IReadOnlyList<LiveRoute> Routes);

    private sealed record LiveRoute(string Route, string Variant, string ServedBy, long Requests);
}
