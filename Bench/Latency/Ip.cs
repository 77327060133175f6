using System.Diagnostics;

namespace Bench.Latency;

/// <summary>The <c>ip</c> command (iproute2), and <c>ss</c>'s view of a TCP connection.</summary>
internal static class Ip
{
    public static async Task RunAsync(CancellationToken cancellationToken, params string[] arguments)
    {
        var (exitCode, output) = await RunProcessAsync("ip", arguments, cancellationToken);
        if (exitCode != 0)
        {
            throw new InvalidOperationException($"ip {string.Join(' ', arguments)}: {output.Trim()}");
        }
    }

    public static async Task<(int ExitCode, string Output)> RunProcessAsync(string file, IEnumerable<string> arguments, CancellationToken cancellationToken)
    {
        using var process = Process.Start(new ProcessStartInfo(file, arguments) { RedirectStandardOutput = true, RedirectStandardError = true })
            ?? throw new InvalidOperationException($"Could not start {file}.");
        var output = process.StandardOutput.ReadToEndAsync(cancellationToken);
        var error = process.StandardError.ReadToEndAsync(cancellationToken);
        await process.WaitForExitAsync(cancellationToken);
        return (process.ExitCode, await output + await error);
    }
}
