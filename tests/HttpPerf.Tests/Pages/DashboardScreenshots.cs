using System.Net.Http.Json;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.Tests.Infrastructure;
using Bench.LocalSystem;
using Microsoft.Playwright;

namespace HttpPerf.Tests.Pages;

/// <summary>
/// Remakes docs/dashboard.md's screenshots from a real run, when asked (it takes about four minutes):
/// <c>DASHBOARD_SCREENSHOTS=docs/dashboard dotnet test HttpPerf.Tests.slnf --filter DashboardScreenshots</c>.
/// The four services at the default catalog size export to the in-test OTLP receiver; the Gateway's landing page
/// is shot in Chromium after traffic that follows the flags across a flip of <c>Catalog.Serialization</c>, and
/// after every lesson in both modes by header. What the run exported is written next to the screenshots.
/// </summary>
[Collection(Lanes.Processes)]
[Trait(Kind.Name, Kind.Pages)]
public sealed class DashboardScreenshots
{
    private static readonly string[] Lessons = ["/api/products", "/api/catalog/products", "/api/catalog/export"];

    [Fact]
    public async Task The_landing_page_across_a_flag_flip_and_in_both_modes()
    {
        await using var run = OptInRun.AskedBy("DASHBOARD_SCREENSHOTS", "remake docs/dashboard.md's screenshots");
        var notes = new List<string>();

        await using var telemetry = await OtlpReceiver.StartAsync();
        var adminKey = $"screenshots-{Guid.NewGuid():N}";
        await using var system = await LocalSystem.StartAsync(new LocalSystemOptions { AdminKey = adminKey, Environment = telemetry.ExporterEnvironment }, Cancel);
        using var gateway = new HttpClient { BaseAddress = system.Gateway.BaseAddress, Timeout = TimeSpan.FromMinutes(5) };
        gateway.DefaultRequestHeaders.Add("X-Admin-Key", adminKey);
        var page = await run.OpenPageAsync(new Uri(system.Gateway.BaseAddress, "/"), 1400, 900);

        // 1. After a warm-up that leaves the landing page's one-minute window before the shot (a cold first
        // request takes seconds), traffic that follows the flags: 20 s optimized, then Catalog.Serialization naive for 20 s.
        await FollowFlagsAsync(gateway, TimeSpan.FromSeconds(5));
        await Task.Delay(TimeSpan.FromSeconds(20), Cancel);
        await FollowFlagsAsync(gateway, TimeSpan.FromSeconds(20));
        var flipped = DateTime.UtcNow;
        await FlipAsync(gateway, PerfMode.Naive);
        await FollowFlagsAsync(gateway, TimeSpan.FromSeconds(20));
        await Assertions.Expect(page.Locator("#routes tr[data-route='products'][data-variant='mixed']")).ToBeVisibleAsync(new() { Timeout = 10_000 });
        await page.WaitForTimeoutAsync(2_500);
        await run.ShootAsync(page, "landing-flip.png", fullPage: true);
        await FlipAsync(gateway, PerfMode.Optimized);

        // What the dashboard would draw for the naive series: where its first cumulative point starts.
        await telemetry.WaitForPointsAsync(TimeSpan.FromSeconds(10), new Dictionary<string, Func<MetricPoint, bool>> { ["naive"] = IsNaiveCatalog });
        var first = telemetry.MetricPoints().Where(IsNaiveCatalog).OrderBy(p => p.Value).First();
        notes.Add($"Catalog.Serialization flipped to naive at {flipped:HH:mm:ss.f} UTC; the first exported point of catalog's " +
            $"http.server.request.duration {{http.route=/catalog/products, perf.variant=naive}} starts at {first.Start:HH:mm:ss.f} UTC " +
            $"({(flipped - first.Start).TotalSeconds:F1} s before the flip), counting {first.Value} requests.");

        // 2. A minute later (the landing page's window), every lesson in both modes by header.
        await Task.Delay(TimeSpan.FromSeconds(61), Cancel);
        for (var round = 0; round < 6; round++)
        {
            foreach (var mode in new[] { PerfMode.Naive, PerfMode.Optimized })
            {
                foreach (var path in Lessons)
                {
                    Assert.Equal(200, (await Http.GetAsync(gateway, path, mode)).Status);
                }
            }
        }

        await Assertions.Expect(page.Locator("#routes tr[data-route='export'][data-variant='naive']")).ToBeVisibleAsync(new() { Timeout = 10_000 });
        await page.WaitForTimeoutAsync(2_500);
        await run.ShootAsync(page, "landing-modes.png", fullPage: true);

        var rows = (await page.Locator("#routes tbody tr").AllInnerTextsAsync()).Select(r => r.Replace('\t', ' '));
        notes.Add("Landing page rows after both modes: " + string.Join(" | ", rows));
        await File.WriteAllLinesAsync(Path.Combine(run.Folder, "run.txt"), notes, Cancel);
        TestContext.Current.TestOutputHelper?.WriteLine(string.Join(Environment.NewLine, notes));
    }

    private static bool IsNaiveCatalog(MetricPoint p) =>
        p.Service == "catalog" && p.Metric == "http.server.request.duration" && p["http.route"] == "/catalog/products" && p["perf.variant"] == PerfMode.Naive;

    /// <summary>Product lists, catalogs and exports one after another, with no mode header, for <paramref name="duration"/>.</summary>
    private static async Task FollowFlagsAsync(HttpClient gateway, TimeSpan duration)
    {
        var end = DateTime.UtcNow + duration;
        while (DateTime.UtcNow < end)
        {
            foreach (var path in Lessons)
            {
                Assert.Equal(200, (await Http.GetAsync(gateway, path)).Status);
            }
        }
    }

    private static async Task FlipAsync(HttpClient gateway, string variant)
    {
        using var flip = await gateway.PutAsJsonAsync($"/admin/flags/{Pitfalls.CatalogSerialization}", variant, Cancel);
        Assert.Equal(System.Net.HttpStatusCode.NoContent, flip.StatusCode);
        var served = await Http.GetUntilServedAsync(gateway, "/api/catalog/products", $"{Pitfalls.CatalogSerialization}={variant}");
        Assert.Contains($"{Pitfalls.CatalogSerialization}={variant}", served, StringComparison.Ordinal);
    }
}
