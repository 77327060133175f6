using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.Tests.Infrastructure;
using Microsoft.Playwright;

namespace HttpPerf.Tests.Pages;

/// <summary>The /admin page in a real browser: Debian's Chromium driven by Playwright.</summary>
[Collection(Lanes.Processes)]
[Trait(Kind.Name, Kind.Pages)]
public sealed class AdminPageTests(SmallSystemFixture fixture) : FlagsFileResetTests(fixture)
{
    [Fact]
    public async Task Clicking_a_switch_serves_the_next_request_in_the_new_mode()
    {
        await using var browser = await Chromium.LaunchAsync();
        var page = await browser.NewPageAsync();

        await page.GotoAsync(new Uri(Fixture.System.Gateway.BaseAddress, "/admin").ToString());
        await page.FillAsync("#key", Fixture.AdminKey);
        await page.ClickAsync("#save-key");

        // Each row offers the rungs Pitfalls.All lists for its flag, each titled with what it does.
        foreach (var pitfall in Pitfalls.All)
        {
            var buttons = page.Locator($"tr[data-flag='{pitfall.Flag}'] button[data-variant]");
            await Assertions.Expect(buttons).ToHaveTextAsync([.. pitfall.Variants.Select(v => v.Name)]);
            Assert.Equal(pitfall.Variants.Select(v => v.Does), await buttons.EvaluateAllAsync<string[]>("buttons => buttons.map(b => b.title)"));
        }

        var row = page.Locator($"tr[data-flag='{Pitfalls.CatalogSerialization}']");
        await Assertions.Expect(row.Locator("td.serving")).ToHaveTextAsync("optimized");

        await row.Locator("button[data-variant='streaming']").ClickAsync();

        await Assertions.Expect(page.Locator("#status")).ToHaveTextAsync($"{Pitfalls.CatalogSerialization} is now served streaming.", new() { Timeout = 15_000 });
        await Assertions.Expect(row.Locator("td.serving")).ToHaveTextAsync("streaming");
        await page.ScreenshotAsync(new() { Path = Path.Combine(AppContext.BaseDirectory, "admin-page.png"), FullPage = true });

        var next = await Http.GetAsync(Fixture.Gateway, "/api/catalog/products");
        Assert.Equal(200, next.Status);
        Assert.Equal("Gateway.Buffering=optimized, Gateway.Upstream=optimized, Catalog.Serialization=streaming", next.Variants);
    }

    [Fact]
    public async Task A_wrong_key_shows_the_problem_and_no_flags()
    {
        await using var browser = await Chromium.LaunchAsync();
        var page = await browser.NewPageAsync();

        await page.GotoAsync(new Uri(Fixture.System.Gateway.BaseAddress, "/admin/").ToString());
        await page.FillAsync("#key", "not-the-key");
        await page.ClickAsync("#save-key");

        await Assertions.Expect(page.Locator("#status")).ToContainTextAsync("401");
        await Assertions.Expect(page.Locator("#flags")).ToBeHiddenAsync();
    }
}
