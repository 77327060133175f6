using System.Diagnostics;
using LoadGen.Bench;

namespace HttpPerf.Tests;

/// <summary>
/// Seed 003 on Kestrel: the CSV export written row by row with a flush each, against coalesced writes,
/// over a loopback with a 100 ms round trip. The test makes its own network namespace, whose loopback gets
/// a <c>tc netem</c> delay of 50 ms each way, and runs <c>LoadGen bench --scenario export</c> (services and client)
/// inside it. It skips, saying why, where namespaces or netem are not available. It checks what was
/// measured, not how fast: the ratio is reported (README).
/// </summary>
public sealed class HighLatencyTests
{
    [Fact]
    public async Task The_export_over_a_100_ms_round_trip_in_both_write_strategies()
    {
        var ns = $"httpperf-{Environment.ProcessId}";
        var created = await RunAsync("ip", ["netns", "add", ns], TimeSpan.FromSeconds(10));
        if (created.ExitCode != 0)
        {
            Assert.Skip($"network namespaces are not permitted here (ip netns add: {created.Output.Trim()})");
        }

        try
        {
            Assert.Equal(0, (await RunAsync("ip", ["netns", "exec", ns, "ip", "link", "set", "lo", "up"], TimeSpan.FromSeconds(10))).ExitCode);
            var netem = await RunAsync("ip", ["netns", "exec", ns, "tc", "qdisc", "add", "dev", "lo", "root", "netem", "delay", "50ms"], TimeSpan.FromSeconds(10));
            if (netem.ExitCode != 0)
            {
                Assert.Skip($"tc netem is not available on this kernel ({netem.Output.Trim()})");
            }

            var loadGen = typeof(BenchRunner).Assembly.Location;
            var output = Directory.CreateTempSubdirectory("httpperf-latency-").FullName;
            try
            {
                var run = await RunAsync("ip", ["netns", "exec", ns, "dotnet", loadGen, "bench", "--scenario", "export", "--products", "20000", "--requests", "2", "--out", output], TimeSpan.FromMinutes(10));
                Assert.True(run.ExitCode == 0, run.Output);

                var result = BenchReport.Read(output);
                var naive = result.Phases.Single(p => p.Mode == BenchRunner.Naive);
                var optimized = result.Phases.Single(p => p.Mode == BenchRunner.Optimized);
                TestContext.Current.TestOutputHelper?.WriteLine($"100 ms RTT, 20,000 rows: naive p50 {naive.P50Ms:F0} ms, optimized p50 {optimized.P50Ms:F0} ms, optimized / naive {optimized.P50Ms / naive.P50Ms:F2}");
                Assert.Equal(0, naive.Errors + optimized.Errors);
                Assert.Equal(naive.ResponseBytes, optimized.ResponseBytes);
                // The delay applies: no response can come back in less than a round trip.
                Assert.True(naive.FirstByteP50Ms >= 100 && optimized.FirstByteP50Ms >= 100, $"first bytes at {naive.FirstByteP50Ms} and {optimized.FirstByteP50Ms} ms");
            }
            finally
            {
                Directory.Delete(output, recursive: true);
            }
        }
        finally
        {
            await RunAsync("ip", ["netns", "del", ns], TimeSpan.FromSeconds(10));
        }
    }

    /// <summary>Runs a command; <c>Output</c> is its standard output, then its standard error.</summary>
    private static async Task<(int ExitCode, string Output, string StandardOutput)> RunAsync(string file, string[] arguments, TimeSpan timeout)
    {
        var start = new ProcessStartInfo(file, arguments) { RedirectStandardOutput = true, RedirectStandardError = true };
        Process process;
        try
        {
            process = Process.Start(start)!;
        }
        catch (System.ComponentModel.Win32Exception missing)
        {
            return (-1, $"{file}: {missing.Message}", "");
        }

        using (process)
        {
            var output = process.StandardOutput.ReadToEndAsync();
            var error = process.StandardError.ReadToEndAsync();
            using var cts = new CancellationTokenSource(timeout);
            try
            {
                await process.WaitForExitAsync(cts.Token);
            }
            catch (OperationCanceledException)
            {
                process.Kill(entireProcessTree: true);
                return (-1, $"{file} did not finish within {timeout}", "");
            }

            var standardOutput = await output;
            return (process.ExitCode, standardOutput + await error, standardOutput);
        }
    }
}
