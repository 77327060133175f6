using System.Diagnostics;
using System.Globalization;
using System.Net.NetworkInformation;
using System.Net.Sockets;
using System.Net;
using System.Text.RegularExpressions;

namespace Bench.Latency;

public sealed record LatencyOptions
{
    public required IReadOnlyList<int> RoundTripsMs { get; init; }

    /// <summary>Requests per case on one warm connection, after the one on a new connection.</summary>
    public int WarmRequests { get; init; } = 3;

    /// <summary>Catalog size for the export cases (default: the service default, about 6 MB of CSV).</summary>
    public int? Products { get; init; }

    /// <summary>
    /// The rate of the line that checks the rate limit, with <see cref="RateCheckRoundTripMs"/>: at most half of what the
    /// line carries there with no rate set, measured first.
    /// </summary>
    public double RateCheckMbit { get; init; } = 100;

    public int RateCheckRoundTripMs { get; init; } = 20;

    public required string OutputDirectory { get; init; }

    public string Configuration { get; init; } = LocalSystem.LocalSystem.CurrentConfiguration;
}

/// <summary>What a path measured: the round trip by ICMP echo and by TCP connect, and a bulk download's rate.</summary>
public sealed record PathCheck(int RoundTripMs, double? RateMbit, double PingMs, double ConnectMs, double BulkMbit);

/// <summary>
/// One case over one path. The request on a new connection is "cold" (handshake, slow start); its kernel figures are
/// <c>ss -ti</c>'s for that connection at the end: data segments, congestion window, send buffer, and the share of the
/// time the sender was limited by its send buffer or by the receiver's window. "Warm" requests reuse one connection.
/// </summary>
public sealed record LatencyCase(
    int RoundTripMs, string Group, string Case, long Bytes, double ColdMs, double WarmP50Ms, double WarmFirstByteMs,
    long DataSegments, double MeanSegmentBytes, int Cwnd, long SendBufferBytes, double SendBufferLimitedPercent,
    double ReceiveWindowLimitedPercent, double? WriteMicroseconds);

/// <param name="Kernel">The TCP settings that explain the figures, on each side: congestion control and send-buffer limits.</param>
public sealed record LatencyResult(MachineInfo Machine, string Kernel, IReadOnlyList<PathCheck> Paths, IReadOnlyList<LatencyCase> Cases);

/// <summary>
/// Seed 003 on Kestrel: over a <see cref="DelayLine"/> at each round trip, a 7 MB response written in 32 KB to 1 MB
/// writes, each flushed, and once left unflushed to the end; a 7 MB upload and download with the client's 4 KB default
/// buffer and with 64 KB (seed 002); the Catalog export in both write strategies, from Catalog.Api and through the
/// Gateway (the services run on the far side, the client here). <see cref="LatencyReport"/> renders its report.
/// </summary>
public static partial class LatencyExperiment
{
    public const int SeedBytes = 7_000_000;
    public const string Writes = "writes";
    public const string Transfer = "transfer";
    public const string Export = "export";

    /// <summary>Seed 003's HttpListener figures (ms, 158 ms RTT) per write size: kernel buffering off, on.</summary>
    public static readonly IReadOnlyDictionary<int, (int Off, int On)> Seed = new Dictionary<int, (int, int)>
    {
        [32 * 1024] = (33_911, 1_154),
        [64 * 1024] = (16_923, 1_149),
        [256 * 1024] = (4_323, 1_107),
        [1024 * 1024] = (1_181, 686),
    };

    public static readonly int[] WriteSizes = [32 * 1024, 64 * 1024, 256 * 1024, 1024 * 1024];

    public static async Task<LatencyResult> RunAsync(LatencyOptions options, Action<string> progress, CancellationToken cancellationToken)
    {
        var machine = MachineInfo.Now(options.Configuration);
        var paths = new List<PathCheck>();
        var cases = new List<LatencyCase>();

        // The same round trip with no rate first: what the line, a user-space process, carries on this machine (a slower
        // one carries less than the 100 Mbit/s asked). The rate checked is at most half of that, or a limit that did not
        // hold would not show.
        var rateCheckRoundTrip = TimeSpan.FromMilliseconds(options.RateCheckRoundTripMs);
        progress($"rate check: the line's own capacity at {options.RateCheckRoundTripMs} ms");
        var capacity = await CheckLineAsync(rateCheckRoundTrip, rateMbit: null, cancellationToken);
        var rate = Math.Min(options.RateCheckMbit, Math.Max(1, Math.Floor(capacity.BulkMbit / 2)));
        progress($"rate check: {rate} Mbit/s at {options.RateCheckRoundTripMs} ms");
        paths.AddRange([capacity, await CheckLineAsync(rateCheckRoundTrip, rate, cancellationToken)]);

        foreach (var rtt in options.RoundTripsMs)
        {
            using var line = await DelayLine.StartAsync(TimeSpan.FromMilliseconds(rtt), cancellationToken: cancellationToken);
            await using (var far = await FarProcess.StartAsync(line, cancellationToken))
            {
                progress($"{rtt} ms: path");
                paths.Add(await CheckPathAsync(line, cancellationToken));
                var server = new Uri($"http://{line.FarAddress}:{FarServer.Port}");
                foreach (var size in WriteSizes)
                {
                    progress($"{rtt} ms: {size / 1024} KB writes");
                    cases.Add(await MeasureAsync(line, options, Writes, $"{size / 1024} KB writes, flushed", server, () => Get($"/writes?size={size}&total={SeedBytes}&flush=true"), 64 * 1024, cancellationToken));
                }

                cases.Add(await MeasureAsync(line, options, Writes, "64 KB writes, unflushed", server, () => Get($"/writes?size={64 * 1024}&total={SeedBytes}&flush=false"), 64 * 1024, cancellationToken));
                foreach (var buffer in new[] { 4 * 1024, 64 * 1024 })
                {
                    progress($"{rtt} ms: transfers, {buffer / 1024} KB client buffer");
                    cases.Add(await MeasureAsync(line, options, Transfer, $"download, client reads {buffer / 1024} KB", server, () => Get($"/writes?size={64 * 1024}&total={SeedBytes}&flush=true"), buffer, cancellationToken));
                    cases.Add(await MeasureAsync(line, options, Transfer, $"upload, client writes {buffer / 1024} KB", server, () => Upload(buffer), 64 * 1024, cancellationToken));
                }
            }

            progress($"{rtt} ms: the services on the far side");
            await using var system = await LocalSystem.LocalSystem.StartAsync(new LocalSystem.LocalSystemOptions
            {
                ProductCount = options.Products,
                Configuration = options.Configuration,
                FarSide = line,
            }, cancellationToken);
            foreach (var (hop, address) in new[] { ("Catalog.Api", system.Catalog.BaseAddress), ("Gateway", system.Gateway.BaseAddress) })
            {
                foreach (var mode in new[] { PerfMode.Naive, PerfMode.Optimized })
                {
                    progress($"{rtt} ms: export from {hop}, {mode}");
                    var path = hop == "Gateway" ? "/api/catalog/export" : "/catalog/export";
                    cases.Add(await MeasureAsync(line, options, Export, $"export from {hop}, {mode}", address, () => Get(path, mode), 64 * 1024, cancellationToken));
                }
            }
        }

        return new LatencyResult(machine, await KernelSettingsAsync(cancellationToken), paths, cases);
    }

    private static async Task<string> KernelSettingsAsync(CancellationToken cancellationToken)
    {
        var (_, output) = await Ip.RunProcessAsync("sysctl", ["-n", "net.ipv4.tcp_congestion_control", "net.ipv4.tcp_wmem", "net.ipv4.tcp_rmem", "net.ipv4.tcp_slow_start_after_idle"], cancellationToken);
        var values = output.Split('\n', StringSplitOptions.RemoveEmptyEntries).Select(v => v.Replace('\t', ' ')).ToArray();
        return values.Length == 4
            ? $"congestion control {values[0]}, tcp_wmem {values[1]}, tcp_rmem {values[2]}, tcp_slow_start_after_idle {values[3]}"
            : output.Trim();
    }

    private static HttpRequestMessage Get(string path, string? mode = null)
    {
        var request = new HttpRequestMessage(HttpMethod.Get, path);
        if (mode is not null)
        {
            request.Headers.Add(PerfMode.RequestHeader, mode);
        }

        return request;
    }

    /// <summary>Seed 002's client point: <c>StreamContent</c> copies the body in pieces of its buffer size (4 KB unless told).</summary>
    private static HttpRequestMessage Upload(int bufferSize) => new(HttpMethod.Post, "/sink")
    {
        Content = new StreamContent(new MemoryStream(new byte[SeedBytes]), bufferSize) { Headers = { ContentLength = SeedBytes } },
    };

    private static async Task<PathCheck> CheckLineAsync(TimeSpan roundTrip, double? rateMbit, CancellationToken cancellationToken)
    {
        using var line = await DelayLine.StartAsync(roundTrip, rateMbit, cancellationToken);
        await using var far = await FarProcess.StartAsync(line, cancellationToken);
        return await CheckPathAsync(line, cancellationToken);
    }

    private static async Task<PathCheck> CheckPathAsync(DelayLine line, CancellationToken cancellationToken)
    {
        using var ping = new Ping();
        var echoes = new List<double>();
        for (var i = 0; i < 5; i++)
        {
            var reply = await ping.SendPingAsync(line.FarAddress, TimeSpan.FromSeconds(5), cancellationToken: cancellationToken);
            if (reply.Status != IPStatus.Success)
            {
                throw new InvalidOperationException($"ping {line.FarAddress}: {reply.Status}");
            }

            echoes.Add(reply.RoundtripTime);
        }

        var connects = new List<double>();
        for (var i = 0; i < 5; i++)
        {
            using var socket = new Socket(SocketType.Stream, ProtocolType.Tcp);
            var started = Stopwatch.GetTimestamp();
            await socket.ConnectAsync(line.FarAddress, FarServer.Port, cancellationToken);
            connects.Add(Stopwatch.GetElapsedTime(started).TotalMilliseconds);
        }

        // A bulk download long enough that slow start is a small part of it: the line's rate, or what it can move.
        var bulkBytes = line.RateMbit is { } rate ? (long)(rate * 1e6 / 8 * 3) : 64L << 20;
        using var client = new HttpClient { BaseAddress = new Uri($"http://{line.FarAddress}:{FarServer.Port}"), Timeout = TimeSpan.FromMinutes(2) };
        var (totalMs, firstByteMs, bytes) = await SendAsync(client, Get($"/writes?size={256 * 1024}&total={bulkBytes}&flush=true"), 64 * 1024, cancellationToken);
        var seconds = (totalMs - firstByteMs) / 1000;
        return new PathCheck((int)line.RoundTrip.TotalMilliseconds, line.RateMbit, Median(echoes), Median(connects), bytes * 8 / seconds / 1e6);
    }

    private static async Task<LatencyCase> MeasureAsync(DelayLine line, LatencyOptions options, string group, string name, Uri server, Func<HttpRequestMessage> request, int readBuffer, CancellationToken cancellationToken)
    {
        // Cold: a connection of its own, whose kernel figures at the end are this request's.
        var (cold, connection) = await WithClientAsync(server, async (client, localPort) =>
        {
            var message = request();
            // The sender's view: this side's for a request with a body (an upload), the far side's for a response.
            var sender = message.Content is null ? line : null;
            var exchange = await SendAsync(client, message, readBuffer, cancellationToken);
            return (exchange, await TcpInfo.ReadAsync(sender, localPort(), cancellationToken));
        });
        double? writeMicroseconds = group == Writes ? await ReadLastWriteAsync(server, cancellationToken) : null;

        var warm = await WithClientAsync(server, async (client, _) =>
        {
            var exchanges = new List<(double TotalMs, double FirstByteMs, long Bytes)>();
            for (var i = 0; i <= options.WarmRequests; i++)
            {
                var exchange = await SendAsync(client, request(), readBuffer, cancellationToken);
                if (i > 0)
                {
                    exchanges.Add(exchange);
                }
            }

            return exchanges;
        });

        return new LatencyCase((int)line.RoundTrip.TotalMilliseconds, group, name, cold.Bytes, cold.TotalMs, Median(warm.Select(w => w.TotalMs)),
            Median(warm.Select(w => w.FirstByteMs)), connection.DataSegments, connection.DataSegments == 0 ? 0 : (double)connection.BytesSent / connection.DataSegments,
            connection.Cwnd, connection.SendBufferBytes, connection.SendBufferLimitedPercent, connection.ReceiveWindowLimitedPercent, writeMicroseconds);
    }

    private static async Task<double> ReadLastWriteAsync(Uri server, CancellationToken cancellationToken)
    {
        using var client = new HttpClient { BaseAddress = server };
        return double.Parse(await client.GetStringAsync("/writes/last", cancellationToken), CultureInfo.InvariantCulture);
    }

    /// <summary>A client of one connection; <c>localPort</c> names it to <c>ss</c> on the far side.</summary>
    private static async Task<T> WithClientAsync<T>(Uri server, Func<HttpClient, Func<int>, Task<T>> use)
    {
        var localPort = 0;
        using var handler = new SocketsHttpHandler
        {
            MaxConnectionsPerServer = 1,
            ConnectCallback = async (context, token) =>
            {
                var socket = new Socket(SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
                await socket.ConnectAsync(context.DnsEndPoint, token);
                localPort = ((IPEndPoint)socket.LocalEndPoint!).Port;
                return new NetworkStream(socket, ownsSocket: true);
            },
        };
        using var client = new HttpClient(handler) { BaseAddress = server, Timeout = TimeSpan.FromMinutes(5) };
        return await use(client, () => localPort);
    }

    private static async Task<(double TotalMs, double FirstByteMs, long Bytes)> SendAsync(HttpClient client, HttpRequestMessage request, int readBuffer, CancellationToken cancellationToken)
    {
        using (request)
        {
            var started = Stopwatch.GetTimestamp();
            using var response = await client.SendAsync(request, HttpCompletionOption.ResponseHeadersRead, cancellationToken);
            var firstByte = Stopwatch.GetElapsedTime(started).TotalMilliseconds;
            response.EnsureSuccessStatusCode();
            await using var body = await response.Content.ReadAsStreamAsync(cancellationToken);
            var buffer = new byte[readBuffer];
            long bytes = 0;
            int read;
            while ((read = await body.ReadAsync(buffer, cancellationToken)) > 0)
            {
                bytes += read;
            }

            return (Stopwatch.GetElapsedTime(started).TotalMilliseconds, firstByte, request.Content is null ? bytes : request.Content.Headers.ContentLength ?? bytes);
        }
    }

    private static double Median(IEnumerable<double> values)
    {
        var sorted = values.Order().ToList();
        return sorted.Count == 0 ? 0 : sorted[sorted.Count / 2];
    }

    /// <summary>The far side's view of one connection (<c>ss -tim</c>), found by the client's port.</summary>
    private sealed partial record TcpInfo(long DataSegments, long BytesSent, int Cwnd, long SendBufferBytes, double SendBufferLimitedPercent, double ReceiveWindowLimitedPercent)
    {
        /// <summary>On the far side (<paramref name="farSide"/>) the connection whose peer port is the client's, here the one whose own port it is.</summary>
        public static async Task<TcpInfo> ReadAsync(DelayLine? farSide, int clientPort, CancellationToken cancellationToken)
        {
            var filter = $"( {(farSide is null ? "sport" : "dport")} = :{clientPort.ToString(CultureInfo.InvariantCulture)} )";
            string[] ss = ["ss", "-timH", "state", "established", filter];
            var (_, output) = farSide is null
                ? await Ip.RunProcessAsync(ss[0], ss[1..], cancellationToken)
                : await Ip.RunProcessAsync("ip", ["netns", "exec", farSide.Namespace, .. ss], cancellationToken);
            var text = output.ReplaceLineEndings(" ");
            long Field(string name) => Regex.Match(text, $@"\b{name}:(\d+)") is { Success: true } m ? long.Parse(m.Groups[1].Value, CultureInfo.InvariantCulture) : 0;
            double Limited(string name) => Regex.Match(text, $@"\b{name}:\d+ms\(([\d.]+)%\)") is { Success: true } m ? double.Parse(m.Groups[1].Value, CultureInfo.InvariantCulture) : 0;
            var sendBuffer = SendBuffer().Match(text) is { Success: true } tb ? long.Parse(tb.Groups[1].Value, CultureInfo.InvariantCulture) : 0;
            return new TcpInfo(Field("data_segs_out"), Field("bytes_sent"), (int)Field("cwnd"), sendBuffer, Limited("sndbuf_limited"), Limited("rwnd_limited"));
        }

        [GeneratedRegex(@"\btb(\d+)")]
        private static partial Regex SendBuffer();
    }
}
