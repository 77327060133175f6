using Microsoft.Playwright;

namespace HttpPerf.Tests.Infrastructure;

/// <summary>Debian's Chromium, headless, driven by Playwright: how the page tests look at what a person sees.</summary>
public static class Chromium
{
    private static readonly string[] BrowserPaths = ["/usr/bin/chromium", "/usr/bin/chromium-browser"];

    public static async Task<BrowserSession> LaunchAsync()
    {
        var executable = BrowserPaths.FirstOrDefault(File.Exists);
        if (executable is null)
        {
            // CI installs Chromium (.ci/run) and must run this test; elsewhere say what is missing.
            Assert.False(Environment.GetEnvironmentVariable("CI") == "true", "Chromium is not installed: apt-get install chromium");
            Assert.Skip("Chromium is not installed (apt-get install chromium); the page tests need it.");
        }

        var playwright = await Playwright.CreateAsync();
        var browser = await playwright.Chromium.LaunchAsync(new()
        {
            ExecutablePath = executable,
            Headless = true,
            // As root in a sandbox, with no network beyond loopback: no sandbox, no background traffic.
            Args = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
        });
        return new BrowserSession(playwright, browser);
    }

    /// <summary>The browser and the Playwright driver, closed together.</summary>
    public sealed class BrowserSession(IPlaywright playwright, IBrowser browser) : IAsyncDisposable
    {
        public Task<IPage> NewPageAsync() => browser.NewPageAsync();

        public async ValueTask DisposeAsync()
        {
            await browser.CloseAsync();
            playwright.Dispose();
        }
    }
}
