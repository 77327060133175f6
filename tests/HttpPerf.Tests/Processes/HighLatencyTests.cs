using System.Diagnostics;
using Bench.Latency;
using Bench.Reports;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.Tests.Infrastructure;

namespace HttpPerf.Tests.Processes;

/// <summary>
/// Seed 003 on Kestrel, over a real 100 ms round trip: <c>Bench latency</c> joins a network namespace to this one by
/// a TUN delay line (no netem needed) and measures 7 MB in writes of 32 KB to 1 MB, transfers, and the Catalog export
/// in both write strategies with the services on the far side. It asserts what the committed report
/// (docs/results/latency) showed; a bound on what the machine can do (the line's rate, what it adds to a round trip) is
/// held to what the same run measured on this machine. It needs root (the namespace and the devices), as CI has;
/// elsewhere it skips, saying so.
/// </summary>
[Collection(Lanes.Orchestrated)]
[Trait(Kind.Name, Kind.Processes)]
[Lesson(Pitfalls.CatalogWriteStrategy)]
public sealed class HighLatencyTests
{
    private const int RoundTripMs = 100;

    [Fact]
    public async Task Over_a_100_ms_round_trip_small_writes_cost_packets_not_round_trips()
    {
        if (!Environment.IsPrivilegedProcess || !File.Exists("/dev/net/tun"))
        {
            Assert.Skip("the delay line needs root and /dev/net/tun (a network namespace and two TUN devices)");
        }

        var output = Directory.CreateTempSubdirectory("httpperf-latency-").FullName;
        try
        {
            // Bench from its own output folder, whose runtime config names ASP.NET Core (the far server is Kestrel).
            var bench = Bench.LocalSystem.LocalSystem.AssemblyPath("Bench", Bench.LocalSystem.LocalSystem.CurrentConfiguration);
            var run = await RunAsync("dotnet", [bench, "latency", "--rtt", $"{RoundTripMs}", "--requests", "2", "--products", "20000", "--out", output], TimeSpan.FromMinutes(8));
            Assert.True(run.ExitCode == 0, run.Output);
            var result = ReportFiles.Read<LatencyResult>(output);
            TestContext.Current.TestOutputHelper?.WriteLine(File.ReadAllText(ReportFiles.MarkdownPath(output)));

            // The delay line never sends a packet early, so ping and a TCP connect take at least the round trip set. What
            // they take on top is this machine's (the line is a user-space process woken for each packet): 5 ms at 20 ms on
            // an idle 2-core machine, 24 ms with two busy loops beside it, 64-169 ms in a quarter to a sixth of a core. So
            // each path may take 10% more than its round trip, twice what the shortest round trip of this run took on top
            // (at least 15 ms), and 10 ms: a delay applied twice still shows at 100 ms.
            var shortest = result.Paths.Min(p => p.RoundTripMs);
            var overhead = result.Paths.Where(p => p.RoundTripMs == shortest).Max(p => Math.Max(p.PingMs, p.ConnectMs) - p.RoundTripMs);
            foreach (var path in result.Paths)
            {
                var most = path.RoundTripMs * 1.1 + 2 * Math.Max(overhead, 15) + 10;
                Assert.InRange(path.PingMs, path.RoundTripMs * 0.9, most);
                Assert.InRange(path.ConnectMs, path.RoundTripMs * 0.9, most);
            }

            // The rate limit: a bulk download over the limited path takes the rate set, and never 5% more. The line is a
            // user-space process, so the same round trip with no rate set, measured first in this run, is what it carries
            // on this machine (the rate set is at most half of it: 100 Mbit/s of 270-680 idle, 18 of 37 in a sixth of a
            // core). A machine that stalls the line's threads loses the time they wait (0.87-0.94 of the rate idle, 0.67
            // in a sixth of a core), so the floor is half the lower of the two. A limiter off by a unit, or one packet a
            // round trip, is far below it; one that does not limit, far above.
            var limited = result.Paths.Single(p => p.RateMbit is not null);
            var rate = limited.RateMbit!.Value;
            var capacity = result.Paths.Single(p => p.RoundTripMs == limited.RoundTripMs && p.RateMbit is null).BulkMbit;
            Assert.InRange(limited.BulkMbit, Math.Min(rate, capacity) * 0.5, rate * 1.05);

            // No round trip per write, unlike HTTP.sys without kernel buffering (seed 003: 214 writes of 32 KB, 34 s):
            // a flush returns once the bytes are in the socket's send buffer, so 32 KB flushed writes take about as long
            // as 1 MB ones or one write at the end, and send the same full-size segments.
            var writes = result.Cases.Where(c => c.Group == LatencyExperiment.Writes).ToList();
            var smallest = writes.Single(c => c.Case == "32 KB writes, flushed");
            var unflushed = writes.Single(c => c.Case == "64 KB writes, unflushed");
            Assert.All(writes, c => Assert.Equal(LatencyExperiment.SeedBytes, c.Bytes));
            // Held to one write at the end in this run, warm and on a new connection, with round trips to spare for a
            // machine that stalls (in a sixth of a core the same 7 MB took 455-901 ms warm): a round trip per write is 213 more.
            Assert.True(smallest.WarmP50Ms < unflushed.WarmP50Ms * 1.5 + 5 * RoundTripMs, $"32 KB flushed {smallest.WarmP50Ms:F0} ms, unflushed {unflushed.WarmP50Ms:F0} ms");
            Assert.True(smallest.ColdMs < unflushed.ColdMs + 20 * RoundTripMs, $"32 KB flushed writes took {smallest.ColdMs:F0} ms on a new connection, unflushed {unflushed.ColdMs:F0} ms: a round trip per write would be over {LatencyExperiment.SeedBytes / (32 * 1024) * RoundTripMs} ms more");
            Assert.True(smallest.DataSegments <= unflushed.DataSegments * 1.1, $"{smallest.DataSegments} segments against {unflushed.DataSegments}");

            // Where a flush per row does cost: more and smaller segments than 64 KB flushes, for the same bytes. Their
            // times are the report's, not a bound here: on 2 warm requests beside the other lane, naive once took 218 ms
            // and optimized 305 (the committed report's rows are what the page quotes).
            var naive = result.Cases.Single(c => c.Case == "export from Catalog.Api, naive");
            var optimized = result.Cases.Single(c => c.Case == "export from Catalog.Api, optimized");
            Assert.Equal(optimized.Bytes, naive.Bytes);
            // The segments' mean size is the report's too: it is the bytes on the wire over the segments, and a chunk per
            // row puts more bytes on the wire, so where a loaded machine's kernel joined the rows into full segments the
            // naive mean came out the larger (CI run 39: 1446 bytes a segment, optimized 1442), with more segments still.
            Assert.True(naive.DataSegments > optimized.DataSegments, $"naive {naive.DataSegments} segments, optimized {optimized.DataSegments}");

            // Nothing is left behind: the namespace and the devices go with the run.
            Assert.DoesNotContain($"httpperf-far-", (await RunAsync("ip", ["netns", "list"], TimeSpan.FromSeconds(10))).Output);
        }
        finally
        {
            Directory.Delete(output, recursive: true);
        }
    }

    /// <summary>Runs a command; <c>Output</c> is its standard output, then its standard error.</summary>
    private static async Task<(int ExitCode, string Output)> RunAsync(string file, string[] arguments, TimeSpan timeout)
    {
        using var process = Process.Start(new ProcessStartInfo(file, arguments) { RedirectStandardOutput = true, RedirectStandardError = true })!;
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
            return (-1, $"{file} did not finish within {timeout}");
        }

        return (process.ExitCode, await output + await error);
    }
}
