using System.Diagnostics;
using System.Net.Http.Json;
using System.Security.Cryptography;
using System.Text.Json;
using Aspire.Hosting.ApplicationModel;
using Aspire.Hosting;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.ServiceDefaults;
using HttpPerf.Tests.AppHost;
using HttpPerf.ServiceDefaults.Telemetry;
using HttpPerf.Tests.Infrastructure;
using LoadGen.Load;
using Microsoft.Extensions.Diagnostics.HealthChecks;

namespace HttpPerf.Tests.Containers;

/// <summary>
/// The AppHost's container mode as a user runs it (docs/deploy.md): the services as images, replicas as containers of
/// their own on the engine's network, Redis for the flags; one instance, the class's fixture, shared with its fault tests
/// (ContainerModeTests.Faults.cs; each test leaves the flags as it found them). Skipped, saying why, where no container engine answers.
/// </summary>
[Collection(Lanes.Orchestrated)]
[Trait(Kind.Name, Kind.Containers)]
public sealed partial class ContainerModeTests(ContainerModeFixture system) : IClassFixture<ContainerModeFixture>
{
    [Fact]
    public void Every_resource_is_healthy_and_each_replica_a_non_root_container_with_its_own_address()
    {
        SkipWithoutEngine();
        var addresses = new Dictionary<string, string>();
        foreach (var name in ContainerModeFixture.Containers)
        {
            Assert.True(system.App.ResourceNotifications.TryGetCurrentState(name, out var state), name);
            Assert.Equal(KnownResourceStates.Running, state.Snapshot.State?.Text);
            Assert.Equal(HealthStatus.Healthy, state.Snapshot.HealthStatus);
            Assert.True(system.ContainerIds.TryGetValue(name, out var id), $"{name}: no container id in its snapshot");
            var inspected = system.Engine.Run("inspect", "--format", "{{.Config.Image}}|{{.Config.User}}|{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}", id).Trim().Split('|');
            addresses[name] = inspected[2];
            if (name != SystemContract.FlagsConnectionName)
            {
                var service = name.Split('-')[0];
                Assert.EndsWith($"{SystemContract.Image(service)}:dev", inspected[0], StringComparison.Ordinal);
                Assert.Equal("1654", inspected[1]); // the "app" user of the base image, as the SDK sets it: not root
            }
        }

        // Nine containers, nine addresses on one network.
        Assert.Equal(addresses.Count, addresses.Values.Where(a => a.Length > 0).Distinct().Count());
        Assert.Equal(3 * ContainerModeFixture.Replicas + 2, addresses.Count);
    }

    [Fact]
    public void Each_image_carries_its_own_settings_and_the_uploads_volume_is_mounted_at_its_data_path_for_the_app_user()
    {
        SkipWithoutEngine();
        foreach (var service in new[] { SystemContract.Catalog, SystemContract.Frontend, SystemContract.Uploads, SystemContract.Gateway })
        {
            // The image each replica runs, as the SDK built it: its own environment, not what the AppHost adds.
            var container = system.ContainerIds.First(c => c.Key == service || c.Key.StartsWith($"{service}-", StringComparison.Ordinal)).Value;
            var image = system.Engine.Run("inspect", "--format", "{{.Image}}", container).Trim();
            var environment = JsonSerializer.Deserialize<string[]>(system.Engine.Run("image", "inspect", "--format", "{{json .Config.Env}}", image))!;
            if (service == SystemContract.Gateway)
            {
                Assert.Contains($"{SystemContract.InlineSocketCompletions}=1", environment);
            }
            else
            {
                // HTTP/1.1 where the base image says, as in any ASP.NET Core image; HTTP/2 on a port of its own.
                Assert.Contains("ASPNETCORE_HTTP_PORTS=8080", environment);
                Assert.Contains($"{SystemContract.Http2Port}=8081", environment);
                Assert.DoesNotContain(environment, e => e.StartsWith("Kestrel__", StringComparison.Ordinal) || e.StartsWith("ASPNETCORE_URLS=", StringComparison.Ordinal));
            }
        }

        // Every Uploads.Api replica mounts the shared volume at its data path, not at the app user's home, and may write there.
        foreach (var replica in ContainerModeFixture.ReplicasOf(SystemContract.Uploads))
        {
            var mounts = JsonSerializer.Deserialize<JsonElement[]>(system.Engine.Run("inspect", "--format", "{{json .Mounts}}", system.ContainerIds[replica]))!;
            var volume = Assert.Single(mounts, m => m.GetProperty("Type").GetString() == "volume");
            Assert.Equal((system.UploadsVolume, SystemContract.UploadsContainerDataPath), (volume.GetProperty("Name").GetString(), volume.GetProperty("Destination").GetString()));
            Assert.Equal("app 0", system.Engine.Run("exec", system.ContainerIds[replica], "sh", "-c", $"stat -c %U {SystemContract.UploadsContainerDataPath}; test -w {SystemContract.UploadsContainerDataPath}; echo $?").ReplaceLineEndings(" ").Trim());
        }
    }

    [Fact]
    public async Task Every_rung_returns_the_same_bytes_through_the_Gateway()
    {
        SkipWithoutEngine();
        await EveryRung.AssertSameBytesAsync(system.Gateway);
    }

    [Fact]
    public async Task A_flag_command_is_served_by_every_replica_of_its_service_within_1_s()
    {
        SkipWithoutEngine();
        var upload = await UploadAsync(system.Gateway, "/api/uploads", "flags"u8.ToArray(), mode: null);
        try
        {
            foreach (var (flag, service, path) in new[]
            {
                (Pitfalls.CatalogSerialization, SystemContract.Catalog, "/catalog/products"),
                (Pitfalls.FrontendCatalogClient, SystemContract.Frontend, "/products"),
                (Pitfalls.UploadsDownload, SystemContract.Uploads, $"/uploads/{upload.Id}"),
                (Pitfalls.GatewayBuffering, SystemContract.Gateway, "/api/catalog/products"),
            })
            {
                foreach (var (variant, row) in new[] { (PerfMode.Naive, 0), (PerfMode.Optimized, 1) })
                {
                    // The command of the service's own row (catalog), then of its last replica's (catalog-2); every
                    // replica of the service must serve it, and the answer names them.
                    var replicas = ContainerModeFixture.ReplicasOf(service);
                    var resource = row == 0 ? service : replicas[^1];
                    var result = await system.Commands.ExecuteCommandAsync(resource, $"{flag}-{variant}", Cancel);
                    Assert.True(result.Success, $"{resource} {flag}-{variant}: {result.Message}");
                    Assert.Equal($"{flag} is {variant} on {string.Join(", ", replicas.SkipLast(1))}{(replicas.Count > 1 ? " and " : "")}{replicas[^1]}.", result.Message);
                    // Judged by when a request began, not when its answer ended: a full catalog through a busy Frontend
                    // container can take longer than the second itself. A request begun after 1 s must serve the change.
                    var clock = Stopwatch.StartNew();
                    foreach (var replica in replicas)
                    {
                        using var client = system.Replica(replica);
                        while (true)
                        {
                            var began = clock.Elapsed;
                            var served = (await Http.GetAsync(client, path)).Variants;
                            if (served.Split(", ").Contains($"{flag}={variant}"))
                            {
                                break;
                            }

                            Assert.True(began < TimeSpan.FromSeconds(1), $"{replica} served {served} to a request begun {began.TotalMilliseconds:F0} ms after {flag}: {variant}");
                            await Task.Delay(20, Cancel);
                        }
                    }
                }
            }
        }
        finally
        {
            await system.Commands.ExecuteCommandAsync(SystemContract.Gateway, $"all-flags-{PerfMode.Optimized}", Cancel);
        }
    }

    [Fact]
    public async Task An_upload_through_one_Uploads_replica_downloads_whole_through_the_other()
    {
        SkipWithoutEngine();
        var replicas = ContainerModeFixture.ReplicasOf(SystemContract.Uploads);
        var file = EveryRung.RandomFile(3_000_000);
        using var first = system.Replica(replicas[0]);
        using var second = system.Replica(replicas[1]);
        var receipt = await UploadAsync(first, "/uploads", file, PerfMode.Optimized);
        var download = await Http.GetAsync(second, $"/uploads/{receipt.Id}");
        Assert.Equal(200, download.Status);
        Assert.Equal(file.Length, download.Body.Length);
        Assert.Equal(Convert.ToHexStringLower(SHA256.HashData(file)), download.Sha256);
    }

    [Fact]
    public async Task Every_replica_runs_under_its_memory_limit_knows_it_and_a_download_larger_than_its_heap_is_refused_503_with_no_replica_killed()
    {
        SkipWithoutEngine();
        // The limits a deployment would declare (AppHost appsettings.json, Containers:Limits), as the engine was given them,
        // and as each replica sees them: its cgroup's limit, and the GC heap's, 50% of it (Containers:Environment's
        // DOTNET_GCHeapHardLimitPercent, 0x32, in place of the runtime's 75%: docs/memory.md).
        var limits = MemoryLimitsMiB();
        foreach (var service in new[] { SystemContract.Catalog, SystemContract.Frontend, SystemContract.Uploads, SystemContract.Gateway })
        {
            var limit = limits[service] * 1024L * 1024;
            foreach (var replica in ContainerModeFixture.ReplicasOf(service))
            {
                var host = system.Engine.Run("inspect", "--format", "{{.HostConfig.Memory}} {{.HostConfig.MemorySwap}} {{.HostConfig.RestartPolicy.Name}}", system.ContainerIds[replica]).Trim();
                Assert.Equal($"{limit} {limit} on-failure", host);
                using var client = system.Replica(replica);
                var counters = await client.GetFromJsonAsync<RuntimeCounters>(SystemContract.RuntimePath, Cancel);
                Assert.Equal((limit, limit * 50 / 100), (counters!.MemoryLimitBytes, counters.GcHeapLimitBytes));
            }
        }

        // Uploads.Download's naive rung reads a file whole into one array: 300 MiB, past any heap the limit allows. The
        // replica's memory budget refuses it before it is read (InsufficientMemoryException, docs/memory.md), and the
        // replica answers 503 with Retry-After, not a 500, and is not killed.
        var uploads = ContainerModeFixture.ReplicasOf(SystemContract.Uploads);
        var restartsBefore = uploads.Select(Restarts).ToList();
        string id;
        using (var stored = await system.Gateway.PostAsync("/api/uploads", SyntheticFileContent.Create(300L * 1024 * 1024), Cancel))
        {
            Assert.Equal(201, (int)stored.StatusCode);
            id = (await stored.Content.ReadFromJsonAsync<List<UploadReceipt>>(Cancel))![0].Id;
        }

        var naive = await system.Commands.ExecuteCommandAsync(uploads[0], $"{Pitfalls.UploadsDownload}-{PerfMode.Naive}", Cancel);
        Assert.True(naive.Success, naive.Message);
        try
        {
            await Task.Delay(TimeSpan.FromSeconds(1.5), Cancel);
            foreach (var _ in uploads)
            {
                using var refused = await system.Gateway.GetAsync($"/api/uploads/{id}", HttpCompletionOption.ResponseHeadersRead, Cancel);
                var problem = await refused.Content.ReadFromJsonAsync<Http.ProblemDocument>(Cancel);
                Assert.True((int)refused.StatusCode == 503 && problem?.Title == "Out of memory" && problem.Detail?.StartsWith("Refused: the file read whole and copied into Kestrel's output buffers would hold 600 MiB", StringComparison.Ordinal) == true,
                    $"{(int)refused.StatusCode} {problem?.Title}: {problem?.Detail}");
                Assert.Equal(TimeSpan.FromSeconds(2), refused.Headers.RetryAfter?.Delta);
            }
        }
        finally
        {
            var back = await system.Commands.ExecuteCommandAsync(uploads[0], $"{Pitfalls.UploadsDownload}-{PerfMode.Optimized}", Cancel);
            Assert.True(back.Success, back.Message);
        }

        Assert.Equal(restartsBefore, uploads.Select(Restarts).ToList());
        Assert.All(uploads, replica => Assert.Equal("running", system.Engine.Run("inspect", "--format", "{{.State.Status}}", system.ContainerIds[replica]).Trim()));
        await Task.Delay(TimeSpan.FromSeconds(1.5), Cancel);
        using (var whole = await system.Gateway.GetAsync($"/api/uploads/{id}", HttpCompletionOption.ResponseHeadersRead, Cancel))
        {
            Assert.Equal(200, (int)whole.StatusCode);
            var length = 0L;
            await using var body = await whole.Content.ReadAsStreamAsync(Cancel);
            var buffer = new byte[1 << 20];
            for (int read; (read = await body.ReadAsync(buffer, Cancel)) > 0;)
            {
                length += read;
            }

            Assert.Equal(300L * 1024 * 1024, length);
        }

        using var deleted = await system.Gateway.DeleteAsync($"/api/uploads/{id}", Cancel);
    }

    /// <summary>Container mode's default memory limit per service, in MiB: the AppHost's appsettings.json, <c>Containers:Limits</c>.</summary>
    internal static Dictionary<string, int> MemoryLimitsMiB()
    {
        using var settings = JsonDocument.Parse(File.ReadAllText(Path.Combine(Bench.LocalSystem.LocalSystem.RepositoryRoot(), "AppHost", "appsettings.json")));
        return settings.RootElement.GetProperty("Containers").GetProperty("Limits").EnumerateObject()
            .ToDictionary(service => service.Name, service => service.Value.GetProperty("MemoryMiB").GetInt32());
    }

    private int Restarts(string replica) => int.Parse(system.Engine.Run("inspect", "--format", "{{.RestartCount}}", system.ContainerIds[replica]).Trim(), System.Globalization.CultureInfo.InvariantCulture);

    [Fact]
    public async Task LoadGen_started_from_its_command_brings_traffic_through_the_Gateway()
    {
        SkipWithoutEngine();
        var start = await system.Commands.ExecuteCommandAsync(SystemContract.LoadGen, KnownResourceCommands.StartCommand, Cancel);
        Assert.True(start.Success, start.Message);
        try
        {
            // Its state on the resource (read from its control endpoint in its container) and the Gateway's own count.
            var requests = 0L;
            var seen = await Poll.UntilAsync(() => Task.FromResult(
                system.App.ResourceNotifications.TryGetCurrentState(SystemContract.LoadGen, out var state)
                && long.TryParse(state.Snapshot.Properties.FirstOrDefault(p => p.Name == "loadgen.requests")?.Value?.ToString(), out requests)
                && requests >= 5), TimeSpan.FromSeconds(90), TimeSpan.FromMilliseconds(500));
            Assert.True(seen, $"LoadGen's requests on its resource: {requests} after 90 s");
            var live = await system.Gateway.GetFromJsonAsync<JsonElement>("/live", Cancel);
            Assert.Contains(live.GetProperty("routes").EnumerateArray(), route => route.GetProperty("requests").GetInt64() > 0);
        }
        finally
        {
            await system.Commands.ExecuteCommandAsync(SystemContract.LoadGen, KnownResourceCommands.StopCommand, Cancel);
        }
    }

    [Fact]
    public async Task A_request_through_the_containers_is_one_trace_on_the_dashboard()
    {
        SkipWithoutEngine();
        var traceId = ActivityTraceId.CreateRandom().ToHexString();
        using (var request = new HttpRequestMessage(HttpMethod.Get, "/api/products"))
        {
            request.Headers.Add("traceparent", $"00-{traceId}-{ActivitySpanId.CreateRandom().ToHexString()}-01");
            using var response = await system.Gateway.SendAsync(request, Cancel);
            Assert.Equal(200, (int)response.StatusCode);
            await response.Content.ReadAsByteArrayAsync(Cancel);
        }

        using var dashboard = new HttpClient { BaseAddress = system.Dashboard };
        dashboard.DefaultRequestHeaders.Add("x-api-key", system.DashboardApiKey);
        IReadOnlyList<DashboardSpans.Span> spans = [];
        // Each replica exports as its service (catalog, frontend), the replica its instance (1, 2).
        await Poll.UntilAsync(async () => (spans = await DashboardSpans.GetAsync(dashboard, traceId, Cancel))
            .Select(s => s.Service).Distinct().Count() == 3, TimeSpan.FromSeconds(30), TimeSpan.FromMilliseconds(500));
        Assert.Equal([SystemContract.Catalog, SystemContract.Frontend, SystemContract.Gateway], spans.Select(s => s.Service).Distinct().Order());

        // The dashboard's catalog is every replica: the Gateway spreads catalog requests over both, and the dashboard
        // holds each replica's spans as service catalog, instance 1 and 2, which it names catalog-1 and catalog-2 and
        // groups under catalog in Metrics, Traces and Structured logs (its telemetry API answers one instance a query).
        foreach (var replica in ContainerModeFixture.ReplicasOf(SystemContract.Catalog))
        {
            IReadOnlyList<DashboardSpans.Span> held = [];
            Assert.True(await Poll.UntilAsync(async () =>
            {
                (await system.Gateway.GetAsync("/api/catalog/products", Cancel)).Dispose();
                try
                {
                    held = await DashboardSpans.GetAsync(dashboard, traceId: null, Cancel, resourceName: replica);
                }
                catch (HttpRequestException)
                {
                    // 404 until the dashboard has telemetry of that instance.
                }

                return held.Count > 0;
            }, TimeSpan.FromSeconds(30), TimeSpan.FromMilliseconds(250)), $"no span of {replica}");
            Assert.All(held, s => Assert.Equal((SystemContract.Catalog, replica[(SystemContract.Catalog.Length + 1)..]), (s.Service, s.Instance)));
        }
    }

    [Fact]
    public async Task Each_image_listens_where_ASPNETCORE_HTTP_PORTS_says_as_any_ASP_NET_Core_image_and_its_HTTP_2_listener_where_Http2__Port_says()
    {
        SkipWithoutEngine();
        foreach (var service in new[] { SystemContract.Catalog, SystemContract.Frontend, SystemContract.Uploads, SystemContract.Gateway })
        {
            var image = system.Engine.Run("inspect", "--format", "{{.Image}}", system.ContainerIds.First(c => c.Key == service || c.Key.StartsWith($"{service}-", StringComparison.Ordinal)).Value).Trim();
            var (http1, http2) = (Ports.Free(), Ports.Free());
            // Alone, outside the AppHost: where the image may write, and no flags store (every flag at its default).
            List<string> run = ["run", "-d", "--rm", "-p", $"127.0.0.1:{http1}:9090", "-e", "ASPNETCORE_HTTP_PORTS=9090",
                "-e", $"{SystemContract.CatalogDataDirectory}=/tmp/catalog", "-e", $"{SystemContract.CatalogProductCount}=100", "-e", $"{SystemContract.UploadsDataDirectory}=/tmp/uploads"];
            if (service != SystemContract.Gateway)
            {
                run.AddRange(["-p", $"127.0.0.1:{http2}:9091", "-e", $"{SystemContract.Http2Port}=9091"]);
            }

            var container = system.Engine.Run([.. run, image]).Trim();
            try
            {
                using var client = new HttpClient { BaseAddress = new Uri($"http://127.0.0.1:{http1}") };
                var answered = await Poll.UntilAsync(() => AnswersAsync(client), TimeSpan.FromSeconds(60), TimeSpan.FromMilliseconds(250));
                // Read once: Kestrel logs its addresses, and any override of them, as it starts.
                var log = system.Engine.Run("logs", container);
                Assert.True(answered, $"{service}'s image with ASPNETCORE_HTTP_PORTS=9090 did not answer on 9090 within 60 s: {log}");
                Assert.DoesNotContain("Overriding", log, StringComparison.Ordinal);
                if (service != SystemContract.Gateway)
                {
                    using var h2 = new HttpClient { BaseAddress = new Uri($"http://127.0.0.1:{http2}"), DefaultRequestVersion = System.Net.HttpVersion.Version20, DefaultVersionPolicy = HttpVersionPolicy.RequestVersionExact };
                    using var answer = await h2.GetAsync(SystemContract.AlivePath, Cancel);
                    Assert.Equal((System.Net.HttpStatusCode.OK, System.Net.HttpVersion.Version20), (answer.StatusCode, answer.Version));
                }
            }
            finally
            {
                system.Engine.Run("rm", "-f", container);
            }
        }
    }

    // A container that is starting refuses, or resets, the connection.
    private static async Task<bool> AnswersAsync(HttpClient client)
    {
        try
        {
            return (await Http.GetAsync(client, SystemContract.AlivePath)).Status == 200;
        }
        catch (HttpRequestException)
        {
            return false;
        }
    }

    private void SkipWithoutEngine() => Assert.SkipWhen(system.Unavailable is not null, system.Unavailable ?? "");

    private static async Task<UploadReceipt> UploadAsync(HttpClient client, string path, byte[] file, string? mode) =>
        (await EveryRung.UploadAsync(client, path, file, mode)).Receipt;
}
