using System.Net.Http.Json;
using System.Net;
using System.Text;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.ServiceDefaults;
using HttpPerf.Tests.Infrastructure;
using static HttpPerf.Tests.Infrastructure.AdminRequest;

namespace HttpPerf.Tests.Processes;

/// <summary>The Gateway's /admin/flags API: key, validation, live effect, and what it leaves in telemetry.</summary>
[Collection(Lanes.Processes)]
[Trait(Kind.Name, Kind.Processes)]
public sealed class AdminTests(SmallSystemFixture fixture) : FlagsFileResetTests(fixture)
{
    [Theory]
    [InlineData(null)]
    [InlineData("wrong-key")]
    [InlineData("")]
    public async Task Without_the_right_key_every_admin_route_is_a_401_and_nothing_is_written(string? key)
    {
        foreach (var request in new[]
        {
            Admin(HttpMethod.Get, "/admin/flags", key),
            Admin(HttpMethod.Put, $"/admin/flags/{Pitfalls.CatalogSerialization}", key, "naive"),
            Admin(HttpMethod.Put, "/admin/flags", key, "naive"),
        })
        {
            using var response = await Fixture.Gateway.SendAsync(request, Cancel);
            Assert.Equal(HttpStatusCode.Unauthorized, response.StatusCode);
            Assert.Equal("application/problem+json", response.Content.Headers.ContentType?.MediaType);
            Assert.Equal("X-Admin-Key", response.Headers.WwwAuthenticate.ToString());
        }

        Assert.False(File.Exists(Fixture.System.FlagsFile));
    }

    [Theory]
    [InlineData("Catalog.Nonexistent", "\"naive\"")]
    [InlineData("Catalog.Serialization", "\"turbo\"")]
    [InlineData("Uploads.Download", "\"streaming\"")]
    [InlineData("Catalog.Serialization", "naive")]
    [InlineData("Catalog.Serialization", "")]
    public async Task An_unknown_flag_or_variant_is_a_400_problem_and_nothing_is_written(string flag, string body)
    {
        using var request = Admin(HttpMethod.Put, $"/admin/flags/{flag}", Fixture.AdminKey);
        request.Content = new StringContent(body, Encoding.UTF8, "application/json");

        using var response = await Fixture.Gateway.SendAsync(request, Cancel);

        Assert.Equal(HttpStatusCode.BadRequest, response.StatusCode);
        Assert.Equal("application/problem+json", response.Content.Headers.ContentType?.MediaType);
        Assert.False(File.Exists(Fixture.System.FlagsFile));
    }

    [Fact]
    public async Task The_list_names_every_flag_and_what_each_service_serves()
    {
        // Every service answers for every flag it owns (after any earlier test's file is gone): the
        // catalog of pitfalls and the services agree on the names.
        var flags = await WaitUntilAsync(flags => flags.All(f => f.Serving == "optimized"));

        Assert.Equal(Pitfalls.All.Select(p => p.Flag), flags.Select(f => f.Flag));
        Assert.All(flags, f => Assert.Equal("optimized", f.Variant));
        Assert.Equal(["gateway", "gateway", "frontend", "frontend", "frontend", "frontend", "catalog", "catalog", "uploads", "uploads"], flags.Select(f => f.Service));
    }

    [Fact]
    public async Task Setting_a_flag_switches_the_running_service_and_setting_all_switches_every_one()
    {
        using (var response = await Fixture.Gateway.SendAsync(Admin(HttpMethod.Put, $"/admin/flags/{Pitfalls.CatalogSerialization}", Fixture.AdminKey, "naive"), Cancel))
        {
            Assert.Equal(HttpStatusCode.NoContent, response.StatusCode);
        }

        await WaitUntilAsync(flags => flags.Single(f => f.Flag == Pitfalls.CatalogSerialization).Serving == "naive");
        var next = await Http.GetAsync(Fixture.Gateway, "/api/products");
        Assert.Equal("Gateway.Buffering=optimized, Gateway.Upstream=optimized, Frontend.CatalogClient=optimized, Frontend.Replicas=optimized, Catalog.Serialization=naive", next.Variants);

        using (var response = await Fixture.Gateway.SendAsync(Admin(HttpMethod.Put, "/admin/flags", Fixture.AdminKey, "naive"), Cancel))
        {
            Assert.Equal(HttpStatusCode.NoContent, response.StatusCode);
        }

        var all = await WaitUntilAsync(flags => flags.All(f => f.Serving == "naive"));
        Assert.All(all, f => Assert.Equal("naive", f.Variant));
        Assert.Equal("Gateway.Buffering=naive, Gateway.Upstream=naive, Frontend.CatalogClient=naive, Frontend.Replicas=naive, Catalog.Serialization=naive",
            (await Http.GetAsync(Fixture.Gateway, "/api/products")).Variants);
    }

    [Fact]
    [Lesson(Pitfalls.UploadsReader)]
    public async Task The_upload_reader_takes_each_rung_live_and_every_rung_stores_the_same_sha256()
    {
        var bytes = System.Security.Cryptography.RandomNumberGenerator.GetBytes(1024 * 1024 + 7);
        var sha256 = Convert.ToHexStringLower(System.Security.Cryptography.SHA256.HashData(bytes));
        foreach (var rung in new[] { "naive", "streaming", "optimized" })
        {
            using (var response = await Fixture.Gateway.SendAsync(Admin(HttpMethod.Put, $"/admin/flags/{Pitfalls.UploadsReader}", Fixture.AdminKey, rung), Cancel))
            {
                Assert.Equal(HttpStatusCode.NoContent, response.StatusCode);
            }

            await WaitUntilAsync(flags => flags.Single(f => f.Flag == Pitfalls.UploadsReader).Serving == rung);
            using var form = new MultipartFormDataContent { { new ByteArrayContent(bytes), "file", "live.bin" } };
            using var upload = await Fixture.Gateway.PostAsync("/api/uploads", form, Cancel); // no header: the flag decides

            Assert.Equal(HttpStatusCode.Created, upload.StatusCode);
            Assert.Contains($"Uploads.Reader={rung}", string.Join(", ", upload.Headers.GetValues("X-Perf-Variants")), StringComparison.Ordinal);
            var receipt = Assert.Single((await upload.Content.ReadFromJsonAsync<List<Receipt>>(Cancel))!);
            Assert.Equal(sha256, receipt.Sha256);
            var stored = await File.ReadAllBytesAsync(Path.Combine(Fixture.System.UploadsDataDirectory, receipt.Id, "data"), Cancel);
            Assert.Equal(sha256, Convert.ToHexStringLower(System.Security.Cryptography.SHA256.HashData(stored)));
        }
    }

    private sealed record Receipt(string Id, string Sha256);

    [Fact]
    public async Task Streaming_is_a_rung_of_the_lessons_that_have_it_and_every_flag_streaming_leaves_the_others_optimized()
    {
        using (var response = await Fixture.Gateway.SendAsync(Admin(HttpMethod.Put, $"/admin/flags/{Pitfalls.FrontendCatalogClient}", Fixture.AdminKey, "streaming"), Cancel))
        {
            Assert.Equal(HttpStatusCode.NoContent, response.StatusCode);
        }

        await WaitUntilAsync(flags => flags.Single(f => f.Flag == Pitfalls.FrontendCatalogClient).Serving == "streaming");
        Assert.Equal("Gateway.Buffering=optimized, Gateway.Upstream=optimized, Frontend.CatalogClient=streaming, Frontend.Replicas=optimized, Catalog.Serialization=optimized",
            (await Http.GetAsync(Fixture.Gateway, "/api/products")).Variants);

        using (var response = await Fixture.Gateway.SendAsync(Admin(HttpMethod.Put, $"/admin/flags/{Pitfalls.CatalogSerialization}", Fixture.AdminKey, "streaming"), Cancel))
        {
            Assert.Equal(HttpStatusCode.NoContent, response.StatusCode);
        }

        await WaitUntilAsync(flags => flags.Single(f => f.Flag == Pitfalls.CatalogSerialization).Serving == "streaming");
        Assert.Equal("Gateway.Buffering=optimized, Gateway.Upstream=optimized, Catalog.Serialization=streaming", (await Http.GetAsync(Fixture.Gateway, "/api/catalog/products")).Variants);
        var products = await Http.GetAsync(Fixture.Gateway, "/api/products");
        Assert.Equal("Gateway.Buffering=optimized, Gateway.Upstream=optimized, Frontend.CatalogClient=streaming, Frontend.Replicas=optimized, Catalog.Serialization=streaming", products.Variants);
        Assert.Equal("streaming", PerfMode.Summarize(products.Variants));

        using (var response = await Fixture.Gateway.SendAsync(Admin(HttpMethod.Put, "/admin/flags", Fixture.AdminKey, "naive"), Cancel))
        {
            Assert.Equal(HttpStatusCode.NoContent, response.StatusCode);
        }

        await WaitUntilAsync(flags => flags.All(f => f.Serving == "naive"));
        using (var response = await Fixture.Gateway.SendAsync(Admin(HttpMethod.Put, "/admin/flags", Fixture.AdminKey, "streaming"), Cancel))
        {
            Assert.Equal(HttpStatusCode.NoContent, response.StatusCode);
        }

        var all = await WaitUntilAsync(flags => flags.All(f => f.Serving == Pitfalls.Find(f.Flag)!.Serving("streaming")));
        Assert.Equal(
            [Pitfalls.FrontendCatalogClient, Pitfalls.FrontendGrpc, Pitfalls.CatalogSerialization, Pitfalls.UploadsReader],
            all.Where(f => f.Variant == "streaming").Select(f => f.Flag));
    }

    [Fact]
    public async Task The_landing_page_lists_each_service_the_Gateway_routes_to_at_its_address_in_the_rotation()
    {
        var destinations = await GatewayHealth.ReadAsync(Fixture.Gateway);
        foreach (var (cluster, service) in new[] { (SystemContract.Catalog, Fixture.System.Catalog), (SystemContract.Frontend, Fixture.System.Frontend), (SystemContract.Uploads, Fixture.System.Uploads) })
        {
            var destination = Assert.Single(destinations, d => d.Cluster == cluster);
            Assert.Equal(service.BaseAddress.Port, new Uri(destination.Address).Port);
            Assert.True(destination.Available, destination.ToString());
            Assert.NotEqual("Unhealthy", destination.Active);
        }
    }

    [Fact]
    public async Task The_admin_api_and_the_landing_page_describe_every_rung_as_Pitfalls_All_does()
    {
        using var admin = await Fixture.Gateway.SendAsync(Admin(HttpMethod.Get, "/admin/flags", Fixture.AdminKey), Cancel);
        var listed = await admin.Content.ReadFromJsonAsync<System.Text.Json.JsonElement>(Cancel);
        var live = await Fixture.Gateway.GetFromJsonAsync<System.Text.Json.JsonElement>("/live", Cancel);

        foreach (var flags in new[] { listed, live.GetProperty("flags") })
        {
            Assert.Equal(Pitfalls.All.Select(p => p.Flag), flags.EnumerateArray().Select(f => f.GetProperty("flag").GetString()));
            foreach (var (pitfall, flag) in Pitfalls.All.Zip(flags.EnumerateArray()))
            {
                Assert.Equal(
                    pitfall.Variants.Select(v => $"{v.Name}: {v.Does}"),
                    flag.GetProperty("variants").EnumerateArray().Select(v => $"{v.GetProperty("name").GetString()}: {v.GetProperty("does").GetString()}"));
            }
        }

        // The landing page's "What it does now" is the description of the rung in the flags file.
        Assert.All(live.GetProperty("flags").EnumerateArray(), f => Assert.Equal(
            Pitfalls.Find(f.GetProperty("flag").GetString()!)!.Describe(f.GetProperty("variant").GetString()), f.GetProperty("does").GetString()));
    }

    [Fact]
    public async Task Every_change_leaves_exactly_one_audit_record_naming_its_source_and_the_key_is_never_exported()
    {
        var started = DateTime.UtcNow;
        var keyId = Convert.ToHexStringLower(System.Security.Cryptography.SHA256.HashData(Encoding.UTF8.GetBytes(Fixture.AdminKey)))[..8];

        // Through the admin API, as a dashboard command, as the admin page, and as any other caller; each waits for its
        // record, so the next change is not folded into it.
        await SetAsync(Pitfalls.UploadsReader, "naive", "dashboard-command");
        await WaitForAuditAsync(started, (Pitfalls.UploadsReader, "optimized", "naive", "dashboard-command"));
        await SetAsync(Pitfalls.UploadsReader, "streaming", "admin-page");
        await WaitForAuditAsync(started, (Pitfalls.UploadsReader, "naive", "streaming", "admin-page"));
        await SetAsync(Pitfalls.UploadsReader, "optimized", client: null);
        await WaitForAuditAsync(started, (Pitfalls.UploadsReader, "streaming", "optimized", "admin-api"));
        // Setting what is already there is no change: no record.
        await SetAsync(Pitfalls.UploadsReader, "optimized", client: null);

        // An edit of the flags file by anything else.
        await HttpPerf.ServiceDefaults.FlagSources.FlagsFile.SetAsync(Fixture.System.FlagsFile, new Dictionary<string, string> { [Pitfalls.CatalogWriteStrategy] = "naive" }, Cancel);
        await WaitForAuditAsync(started, (Pitfalls.CatalogWriteStrategy, "optimized", "naive", "flags-file"));
        await Task.Delay(TimeSpan.FromSeconds(3), Cancel); // a second record of any of them would have arrived by now

        // Exactly one record per change (earlier tests' resets of the flags file may add records of their own).
        var records = AuditRecords(started);
        var admin = records.Where(r => r["Source"] != "flags-file").ToList();
        Assert.Equal(
            [
                (Pitfalls.UploadsReader, "optimized", "naive", "dashboard-command", keyId),
                (Pitfalls.UploadsReader, "naive", "streaming", "admin-page", keyId),
                (Pitfalls.UploadsReader, "streaming", "optimized", "admin-api", keyId),
            ],
            admin.Select(r => (r["Flag"], r["Old"], r["New"], r["Source"], r["KeyId"])));
        Assert.All(admin, r => Assert.Equal("127.0.0.1", r["ClientAddress"]));
        // The earlier test's reset of the flags file may be recorded after `started` (Catalog.WriteStrategy naive to
        // optimized, among others), so the edit is found by what it changed.
        var edit = Assert.Single(records, r => (r["Flag"], r["Old"], r["New"], r["Source"]) == (Pitfalls.CatalogWriteStrategy, "optimized", "naive", "flags-file"));
        Assert.Null(edit["KeyId"]);
        Assert.Null(edit["ClientAddress"]);
        Assert.All(records, r => Assert.True((r["event_name"] ?? r["EventName"]) == "FlagChanged", string.Join(", ", r.Attributes)));
        Assert.True(await Fixture.Telemetry.WaitForAsync("metrics", TimeSpan.FromSeconds(10), "httpperf.flag.changes", "feature_flag.key"));
        Assert.False(Fixture.Telemetry.AnyContains(Fixture.AdminKey), "the admin key was exported in telemetry");
    }

    private async Task SetAsync(string flag, string variant, string? client)
    {
        var request = Admin(HttpMethod.Put, $"/admin/flags/{flag}", Fixture.AdminKey, variant);
        if (client is not null)
        {
            request.Headers.Add("X-Admin-Client", client);
        }

        using var response = await Fixture.Gateway.SendAsync(request, Cancel);
        Assert.Equal(HttpStatusCode.NoContent, response.StatusCode);
    }

    private async Task WaitForAuditAsync(DateTime since, (string Flag, string Old, string New, string Source) change) =>
        Assert.True(
            await Poll.UntilAsync(() => AuditRecords(since).Any(r => (r["Flag"], r["Old"], r["New"], r["Source"]) == change), TimeSpan.FromSeconds(20)),
            $"no audit record of {change}; those since {since:O}:{Environment.NewLine}{string.Join(Environment.NewLine, AuditRecords(since).Select(r => r.Body))}");

    /// <summary>The Gateway's audit records (category HttpPerf.Audit) since <paramref name="since"/>, oldest first.</summary>
    private List<LogRecord> AuditRecords(DateTime since) =>
        Fixture.Telemetry.Logs().Where(l => l.Service == "gateway" && l.Category == SystemContract.AuditCategory && l.Time >= since).OrderBy(l => l.Time).ToList();

    [Fact]
    public async Task Admin_requests_and_the_landing_pages_polling_add_no_request_series_without_perf_tags()
    {
        // What a dashboard command, the admin page and an open landing page send, and one lesson.
        using (var response = await Fixture.Gateway.SendAsync(Admin(HttpMethod.Put, $"/admin/flags/{Pitfalls.CatalogSerialization}", Fixture.AdminKey, "optimized"), Cancel))
        {
            Assert.Equal(HttpStatusCode.NoContent, response.StatusCode);
        }

        await ListAsync();
        foreach (var path in new[] { "/", "/admin/", "/live", "/live", "/flags", "/openapi/v1.json" })
        {
            using var response = await Fixture.Gateway.GetAsync(path, Cancel);
            Assert.True(response.IsSuccessStatusCode, $"{path}: {(int)response.StatusCode}");
        }

        Assert.Equal(200, (await Http.GetAsync(Fixture.Gateway, "/api/catalog/products")).Status);

        // The Gateway's routing counter has exported them; two more exports (every second) carry every series there is.
        var routed = new Dictionary<string, Func<MetricPoint, bool>>();
        foreach (var route in new[] { "/admin/flags/{name}", "/admin/flags/", "/live" })
        {
            routed[route] = p => p.Service == "gateway" && p.Metric == "aspnetcore.routing.match_attempts" && p["http.route"] == route;
        }

        Assert.Empty(await Fixture.Telemetry.WaitForPointsAsync(TimeSpan.FromSeconds(10), routed));
        await Task.Delay(TimeSpan.FromSeconds(2.5), Cancel);

        // The dashboard lists a series that lacks a tag as "(Unset)" in that tag's filter: every successful request
        // series of every service carries all three perf tags. (LoadGen's control host, started inside this test
        // process by other tests, also measured the in-test receiver's requests: not a service.)
        var services = SystemContract.Services.Select(s => s.Name).ToList();
        var succeeded = Fixture.Telemetry.MetricPoints()
            .Where(p => services.Contains(p.Service))
            .Where(p => p.Metric == "http.server.request.duration" && int.Parse(p["http.response.status_code"]!, System.Globalization.CultureInfo.InvariantCulture) < 400)
            .ToList();
        Assert.Contains(succeeded, p => p.Service == "gateway" && p["http.route"] == "/api/catalog/products");
        var untagged = succeeded
            .Where(p => p["perf.flag"] is null || p["perf.variant"] is null || p["perf.mode"] is null)
            .Select(p => $"{p.Service} {p["http.request.method"]} {p["http.route"] ?? "(no route)"} {p["http.response.status_code"]}")
            .Distinct();
        Assert.Empty(untagged);
    }

    private async Task<List<FlagState>> WaitUntilAsync(Func<List<FlagState>, bool> condition)
    {
        var deadline = DateTime.UtcNow.AddSeconds(10);
        List<FlagState> flags;
        do
        {
            flags = await ListAsync();
            if (condition(flags))
            {
                return flags;
            }

            await Task.Delay(100, Cancel);
        }
        while (DateTime.UtcNow < deadline);

        Assert.Fail($"Flags never reached the expected state: {string.Join(", ", flags.Select(f => $"{f.Flag}={f.Variant}/{f.Serving}"))}");
        return flags;
    }

    private async Task<List<FlagState>> ListAsync()
    {
        using var response = await Fixture.Gateway.SendAsync(Admin(HttpMethod.Get, "/admin/flags", Fixture.AdminKey), Cancel);
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        return (await response.Content.ReadFromJsonAsync<List<FlagState>>(Cancel))!;
    }

    public sealed record FlagState(string Flag, string Service, string Variant, string? Serving, string Naive, string Optimized);
}
