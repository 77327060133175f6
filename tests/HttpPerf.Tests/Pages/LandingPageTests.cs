using System.Net.Http.Json;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.Tests.Infrastructure;
using Microsoft.Playwright;

namespace HttpPerf.Tests.Pages;

/// <summary>The Gateway's landing page at <c>/</c>, in a real browser: the flags, and the last minute by route and variant.</summary>
[Collection(Lanes.Processes)]
[Trait(Kind.Name, Kind.Pages)]
public sealed class LandingPageTests(SmallSystemFixture fixture) : FlagsFileResetTests(fixture)
{
    [Fact]
    public async Task The_gateway_root_is_an_html_page()
    {
        var root = await Http.GetAsync(Fixture.Gateway, "/");

        Assert.Equal(200, root.Status);
        Assert.Equal("text/html", root.MediaType);
    }

    [Fact]
    public async Task A_flag_flip_shows_in_the_flags_and_as_a_new_row_for_the_variant_that_now_serves()
    {
        await using var browser = await Chromium.LaunchAsync();
        var page = await browser.NewPageAsync();
        await page.GotoAsync(new Uri(Fixture.System.Gateway.BaseAddress, "/").ToString());

        var flag = page.Locator($"#flags tr[data-flag='{Pitfalls.CatalogSerialization}'] td.variant");
        await Assertions.Expect(flag).ToHaveTextAsync("optimized");
        await Assertions.Expect(page.Locator("#flags td.does")).ToHaveTextAsync([.. Pitfalls.All.Select(p => p.Optimized)]);
        Assert.Equal(200, (await Http.GetAsync(Fixture.Gateway, "/api/catalog/products")).Status);
        var optimizedRow = page.Locator("#routes tr[data-route='catalog'][data-variant='optimized']");
        await Assertions.Expect(optimizedRow).ToBeVisibleAsync(new() { Timeout = 10_000 });

        // Flip one flag the way the admin page does, then send traffic until it is served the new way.
        using (var flip = new HttpRequestMessage(HttpMethod.Put, $"/admin/flags/{Pitfalls.CatalogSerialization}") { Content = JsonContent.Create("naive") })
        {
            flip.Headers.Add("X-Admin-Key", Fixture.AdminKey);
            using var flipped = await Fixture.Gateway.SendAsync(flip, Cancel);
            Assert.Equal(System.Net.HttpStatusCode.NoContent, flipped.StatusCode);
        }

        var served = await Http.GetUntilServedAsync(Fixture.Gateway, "/api/catalog/products", "Catalog.Serialization=naive");
        Assert.Equal("Gateway.Buffering=optimized, Gateway.Upstream=optimized, Catalog.Serialization=naive", served);
        await Assertions.Expect(flag).ToHaveTextAsync("naive", new() { Timeout = 10_000 });
        await Assertions.Expect(page.Locator($"#flags tr[data-flag='{Pitfalls.CatalogSerialization}'] td.does"))
            .ToHaveTextAsync(Pitfalls.Find(Pitfalls.CatalogSerialization)!.Naive);
        var newRow = page.Locator("#routes tr[data-route='catalog'][data-variant='mixed']");
        await Assertions.Expect(newRow).ToBeVisibleAsync(new() { Timeout = 10_000 });
        await Assertions.Expect(newRow).ToContainTextAsync("Catalog.Serialization=naive");
        await Assertions.Expect(optimizedRow).ToBeVisibleAsync();

        // The route's chart draws both modes: the optimized line, and the mixed one since the flip.
        var chart = page.Locator("#charts svg[data-route='catalog']");
        await Assertions.Expect(chart.Locator("polyline[data-variant='optimized']").First).ToBeAttachedAsync();
        await Assertions.Expect(chart.Locator("polyline[data-variant='mixed']").First).ToBeAttachedAsync(new() { Timeout = 10_000 });
        await page.ScreenshotAsync(new() { Path = Path.Combine(AppContext.BaseDirectory, "landing-page.png"), FullPage = true });
    }
}
