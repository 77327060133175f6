using System.Globalization;
using System.Text;

namespace Bench.Latency;

/// <summary>report.md of <see cref="LatencyExperiment"/>: the path checks, then a table per round trip beside seed 003's figures.</summary>
public static class LatencyReport
{
    /// <summary>report.md of <paramref name="result"/>, made by <paramref name="command"/>.</summary>
    public static string Render(LatencyResult result, string command)
    {
        var text = MadeBy.Heading("Seed 003 on Kestrel: writes of each size over a long round trip", command, result.Machine);
        text.AppendLine("The client runs here, the server on the far side of a TUN delay line (`Bench/Latency/DelayLine.cs`); both are this");
        text.AppendLine(Invariant($"kernel's TCP ({result.Kernel}). Times are milliseconds for the whole 7,000,000-byte body. \"Cold\" is a new"));
        text.AppendLine("connection (handshake and slow start included); \"warm\" the median of requests on one connection. Segments,");
        text.AppendLine("window and buffer are `ss -tim` on the sending side for the cold request's connection, at its end.");
        text.AppendLine();
        text.AppendLine("## The path");
        text.AppendLine();
        text.AppendLine("With no rate set, the bulk download is what the line itself, a user-space process, carries on this machine at that");
        text.AppendLine("round trip; the rate set at the same round trip is at most half of it, so that a limit that did not hold would show.");
        text.AppendLine();
        text.AppendLine("| round trip set ms | rate set Mbit/s | ping ms | TCP connect ms | bulk download Mbit/s |");
        text.AppendLine("|---:|---:|---:|---:|---:|");
        foreach (var path in result.Paths)
        {
            text.AppendLine(Invariant($"| {path.RoundTripMs} | {(path.RateMbit is { } rate ? rate.ToString("F0", CultureInfo.InvariantCulture) : "none")} | {path.PingMs:F1} | {path.ConnectMs:F1} | {path.BulkMbit:F0} |"));
        }

        foreach (var rtt in result.Cases.Select(c => c.RoundTripMs).Distinct())
        {
            text.AppendLine();
            text.AppendLine(Invariant($"## {rtt} ms round trip"));
            text.AppendLine();
            text.AppendLine("| case | seed 003, HTTP.sys unbuffered, 158 ms | seed 003, kernel buffering, 158 ms | cold ms | warm ms | warm first byte ms | server µs per write | data segments | mean segment bytes | cwnd at end | send buffer KB | send-buffer limited % | receive-window limited % |");
            text.AppendLine("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
            foreach (var row in result.Cases.Where(c => c.RoundTripMs == rtt))
            {
                var seed = SeedFor(row);
                text.AppendLine(Invariant($"| {row.Case} | {seed.Off} | {seed.On} | {row.ColdMs:F0} | {row.WarmP50Ms:F0} | {row.WarmFirstByteMs:F0} | {(row.WriteMicroseconds is { } w ? w.ToString("F0", CultureInfo.InvariantCulture) : "–")} | {row.DataSegments:N0} | {row.MeanSegmentBytes:F0} | {row.Cwnd} | {row.SendBufferBytes / 1024} | {row.SendBufferLimitedPercent:F0} | {row.ReceiveWindowLimitedPercent:F0} |"));
            }
        }

        return text.ToString();
    }

    /// <summary>
    /// The Catalog.WriteStrategy page's table: each write size at each round trip beside seed 003's HTTP.sys figures,
    /// and the export's two write strategies from Catalog.Api.
    /// </summary>
    public static string RenderSeedTable(LatencyResult result)
    {
        var rtts = result.Cases.Select(c => c.RoundTripMs).Distinct().ToList();
        var text = new StringBuilder();
        text.Append("| response (7 MB; the export 6.2 MB) | seed 003: HTTP.sys unbuffered, 158 ms RTT, ms | seed 003: kernel buffering, ms |");
        foreach (var rtt in rtts)
        {
            text.Append(Invariant($" Kestrel, {rtt} ms RTT: new connection, ms | warm, ms | segments |"));
        }

        text.AppendLine();
        text.AppendLine("|---|---:|---:|" + string.Concat(Enumerable.Repeat("---:|---:|---:|", rtts.Count)));
        var rows = result.Cases.Where(c => c.Group == LatencyExperiment.Writes || c.Case.StartsWith("export from Catalog.Api", StringComparison.Ordinal)).Select(c => c.Case).Distinct();
        foreach (var name in rows)
        {
            var seed = SeedFor(result.Cases.First(c => c.Case == name));
            text.Append(Invariant($"| {name} | {seed.Off} | {seed.On} |"));
            foreach (var row in rtts.Select(rtt => result.Cases.Single(c => c.RoundTripMs == rtt && c.Case == name)))
            {
                text.Append(Invariant($" {row.ColdMs:N0} | {row.WarmP50Ms:N0} | {row.DataSegments:N0} |"));
            }

            text.AppendLine();
        }

        return text.ToString();
    }

    private static (string Off, string On) SeedFor(LatencyCase row)
    {
        var size = LatencyExperiment.WriteSizes.FirstOrDefault(s => row.Group == LatencyExperiment.Writes && row.Case.StartsWith(Invariant($"{s / 1024} KB writes, flushed"), StringComparison.Ordinal));
        return size != 0 && LatencyExperiment.Seed.TryGetValue(size, out var seed)
            ? (seed.Off.ToString("N0", CultureInfo.InvariantCulture), seed.On.ToString("N0", CultureInfo.InvariantCulture))
            : ("–", "–");
    }

    private static string Invariant(FormattableString text) => text.ToString(CultureInfo.InvariantCulture);
}
