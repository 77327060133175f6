using System.Diagnostics;
using System.Net.Http.Json;
using System.Security.Cryptography;
using System.Text.Json;
using Aspire.Hosting.ApplicationModel;
using Aspire.Hosting;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.ServiceDefaults;
using HttpPerf.Tests.AppHost;
using HttpPerf.Tests.Infrastructure;
using Microsoft.Extensions.Diagnostics.HealthChecks;

namespace HttpPerf.Tests.Containers;

/// <summary>
/// The AppHost's container mode as a user runs it (docs/deploy.md): the services as images, replicas as containers of
/// their own on the engine's network, Redis for the flags; one instance for the class (each test leaves the flags as
/// it found them). Skipped, saying why, where no container engine answers.
/// </summary>
[Trait(Kind.Name, Kind.Containers)]
public sealed class ContainerModeTests(ContainerModeFixture system) : IClassFixture<ContainerModeFixture>
{
    private static CancellationToken Cancel => TestContext.Current.CancellationToken;

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
            var inspected = ContainerEngine.Run("inspect", "--format", "{{.Config.Image}}|{{.Config.User}}|{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}", id).Trim().Split('|');
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
    public void Each_image_carries_its_own_settings_the_services_two_listeners_and_the_Gateways_relay()
    {
        SkipWithoutEngine();
        foreach (var service in new[] { SystemContract.Catalog, SystemContract.Frontend, SystemContract.Uploads, SystemContract.Gateway })
        {
            // The image each replica runs, as the SDK built it: its own environment, not what the AppHost adds.
            var container = system.ContainerIds.First(c => c.Key == service || c.Key.StartsWith($"{service}-", StringComparison.Ordinal)).Value;
            var image = ContainerEngine.Run("inspect", "--format", "{{.Image}}", container).Trim();
            var environment = JsonSerializer.Deserialize<string[]>(ContainerEngine.Run("image", "inspect", "--format", "{{json .Config.Env}}", image))!;
            if (service == SystemContract.Gateway)
            {
                Assert.Contains($"{SystemContract.InlineSocketCompletions}=1", environment);
            }
            else
            {
                Assert.Contains($"{SystemContract.KestrelEndpointUrl(SystemContract.HttpEndpoint)}=http://+:8080", environment);
                Assert.Contains($"{SystemContract.KestrelEndpointUrl(SystemContract.Http2Endpoint)}=http://+:8081", environment);
            }
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
                foreach (var variant in new[] { PerfMode.Naive, PerfMode.Optimized })
                {
                    // The command of one replica's menu; every replica of the service must serve it.
                    var replicas = ContainerModeFixture.ReplicasOf(service);
                    var result = await system.Commands.ExecuteCommandAsync(replicas[^1], $"{flag}-{variant}", Cancel);
                    Assert.True(result.Success, $"{flag}-{variant}: {result.Message}");
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
        // Each replica exports under its own resource's name (catalog-1, frontend-2, ...).
        await Poll.UntilAsync(async () => (spans = await DashboardSpans.GetAsync(dashboard, traceId, Cancel))
            .Select(s => s.Service.Split('-')[0]).Distinct().Count() == 3, TimeSpan.FromSeconds(30), TimeSpan.FromMilliseconds(500));
        Assert.Equal([SystemContract.Catalog, SystemContract.Frontend, SystemContract.Gateway], spans.Select(s => s.Service.Split('-')[0]).Distinct().Order());
    }

    private void SkipWithoutEngine() => Assert.SkipWhen(system.Unavailable is not null, system.Unavailable ?? "");

    private static async Task<UploadReceipt> UploadAsync(HttpClient client, string path, byte[] file, string? mode) =>
        (await EveryRung.UploadAsync(client, path, file, mode)).Receipt;
}
