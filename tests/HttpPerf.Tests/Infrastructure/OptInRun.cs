using HttpPerf.ServiceDefaults;
using HttpPerf.ServiceDefaults.Contract;
using Bench.LocalSystem;
using Microsoft.Playwright;

namespace HttpPerf.Tests.Infrastructure;

/// <summary>
/// The start every opt-in run shares, the runs that remake docs' pictures and reports from a real system
/// (*DashboardScreenshots, DemoMeasurement): an environment variable names the folder to write to, and without it the
/// test skips, saying what to set; the AppHost it runs on is started, and at the end its flags go back to optimized
/// and it stops; Chromium opens pages, logged in to the dashboard as a person does with the URL the AppHost prints.
/// Disposing the run closes the browser, then stops the AppHost.
/// </summary>
public sealed class OptInRun : IAsyncDisposable
{
    /// <summary>The variable that asks for the pictures of the real Aspire dashboard (docs/dashboard, the pitfalls' pages).</summary>
    public const string AspireDashboardScreenshots = "ASPIRE_DASHBOARD_SCREENSHOTS";

    private Chromium.BrowserSession? _browser;

    private AppHostUnderTest? _appHost;

    private bool _started;

    private OptInRun(string folder) => Folder = folder;

    /// <summary>The started AppHost.</summary>
    public AppHostUnderTest AppHost => _appHost ?? throw new InvalidOperationException("The run has started no AppHost.");

    /// <summary>The page of the AppHost's dashboard that <see cref="DashboardPicturesAsync"/> logged in.</summary>
    public IPage Page { get; private set; } = null!;

    /// <summary>The folder the variable names, from the repository root, made if missing.</summary>
    public string Folder { get; }

    /// <summary>The run <paramref name="variable"/> asks for; without it the test skips: "Set {variable} to a folder to {purpose}."</summary>
    public static OptInRun AskedBy(string variable, string purpose)
    {
        var folder = Environment.GetEnvironmentVariable(variable);
        if (string.IsNullOrEmpty(folder))
        {
            Assert.Skip($"Set {variable} to a folder to {purpose}.");
        }

        return new OptInRun(Directory.CreateDirectory(Path.GetFullPath(folder, LocalSystem.RepositoryRoot())).FullName);
    }

    /// <summary>
    /// A run that remakes <paramref name="pictures"/> from the real Aspire dashboard, asked for by
    /// <see cref="AspireDashboardScreenshots"/>: <paramref name="appHost"/> started, and <see cref="Page"/> logged in to its dashboard.
    /// </summary>
    public static async Task<OptInRun> DashboardPicturesAsync(string pictures, AppHostUnderTest appHost)
    {
        var run = AskedBy(AspireDashboardScreenshots, $"remake {pictures}");
        try
        {
            await run.StartAsync(appHost);
            run.Page = await run.LogInAsync();
            return run;
        }
        catch
        {
            await run.DisposeAsync();
            throw;
        }
    }

    /// <summary>Starts <paramref name="appHost"/> (where it cannot run here, the test skips saying why); the run stops it.</summary>
    public async Task<TAppHost> StartAsync<TAppHost>(TAppHost appHost)
        where TAppHost : AppHostUnderTest
    {
        Assert.SkipWhen(appHost.Unavailable is not null, appHost.Unavailable ?? "");
        _appHost = appHost;
        await appHost.InitializeAsync();
        _started = true;
        return appHost;
    }

    /// <summary>A page of <paramref name="width"/> by <paramref name="height"/> at <paramref name="address"/>, in the run's Chromium (launched with the first).</summary>
    public async Task<IPage> OpenPageAsync(Uri address, int width, int height)
    {
        _browser ??= await Chromium.LaunchAsync();
        var page = await _browser.NewPageAsync();
        await page.SetViewportSizeAsync(width, height);
        await page.GotoAsync(address.ToString());
        return page;
    }

    /// <summary>A 1500x950 page of the started AppHost's dashboard, logged in with the token, the resources listed.</summary>
    public async Task<IPage> LogInAsync()
    {
        var appHost = _appHost ?? throw new InvalidOperationException("Start the AppHost before logging in to its dashboard.");
        var page = await OpenPageAsync(new Uri(appHost.Dashboard, $"/login?t={appHost.BrowserToken}"), 1500, 950);
        await Assertions.Expect(page.GetByRole(AriaRole.Row).Filter(new() { HasText = SystemContract.Gateway })).ToBeVisibleAsync();
        return page;
    }

    /// <summary>The page as it is now, in <see cref="Folder"/> (<paramref name="picture"/> may name a folder in it); <paramref name="clip"/> shoots a part.</summary>
    public async Task ShootAsync(IPage page, string picture, Clip? clip = null, bool fullPage = false)
    {
        var path = Path.Combine(Folder, picture);
        Directory.CreateDirectory(Path.GetDirectoryName(path)!);
        await page.ScreenshotAsync(new() { Path = path, Clip = clip, FullPage = fullPage });
    }

    public async ValueTask DisposeAsync()
    {
        if (_browser is not null)
        {
            await _browser.DisposeAsync();
        }

        if (_appHost is null)
        {
            return;
        }

        try
        {
            if (_started)
            {
                await _appHost.Commands.ExecuteCommandAsync(SystemContract.Gateway, $"all-flags-{PerfMode.Optimized}", TestContext.Current.CancellationToken);
            }
        }
        finally
        {
            await _appHost.DisposeAsync();
        }
    }
}
