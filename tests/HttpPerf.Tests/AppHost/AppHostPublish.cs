using System.Diagnostics;
using Bench.LocalSystem;

namespace HttpPerf.Tests.AppHost;

/// <summary>The built AppHost run as <c>aspire publish</c> runs it: <c>--operation publish</c> and the given step or publisher, into a folder of its own.</summary>
internal static class AppHostPublish
{
    /// <summary>Publishes into a new folder inside the checkout (artifacts/ is ignored by git), where a user would; returns its path.</summary>
    public static async Task<string> RunAsync(string name, params string[] arguments)
    {
        var root = LocalSystem.RepositoryRoot();
        var output = Path.Combine(root, "artifacts", $"{name}-{Guid.NewGuid():N}");
        var appHost = LocalSystem.AssemblyPath("AppHost", LocalSystem.CurrentConfiguration);
        var publish = new ProcessStartInfo("dotnet", ["exec", appHost, "--operation", "publish", .. arguments, "--output-path", output])
        {
            WorkingDirectory = Path.Combine(root, "AppHost"),
            RedirectStandardOutput = true,
            RedirectStandardError = true,
        };
        using var process = Process.Start(publish)!;
        using var timeout = new CancellationTokenSource(TimeSpan.FromMinutes(2));
        var log = process.StandardOutput.ReadToEndAsync(timeout.Token);
        var errors = process.StandardError.ReadToEndAsync(timeout.Token);
        await process.WaitForExitAsync(timeout.Token);
        Assert.True(process.ExitCode == 0, $"publish exited {process.ExitCode}: {await log} {await errors}");
        return output;
    }

    public static void Remove(string? output)
    {
        if (output is not null && Directory.Exists(output))
        {
            Directory.Delete(output, recursive: true);
        }
    }
}
