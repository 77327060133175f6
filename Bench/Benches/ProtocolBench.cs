namespace Bench.Benches;

/// <summary>
/// <c>bench --protocols</c>: Gateway.Upstream measured (docs/pitfalls/Gateway.Upstream.md). One system of one replica
/// each, every flag optimized but Gateway.Upstream, and the Gateway told to relay every request over HTTP/2 in the
/// optimized rung (<c>Gateway:Upstream:Http2For=AllRequests</c>), so that its two rungs are the two protocols: naive
/// relays over HTTP/1.1, optimized over HTTP/2. Each path (the product list, the catalog, a 100 MiB upload and its
/// download) runs in phases that alternate the protocols, HTTP/1.1, HTTP/2, HTTP/1.1, HTTP/2, each after the flags file
/// is rewritten and a response shows the new rung, and a few warm-up requests; requests one at a time. Each row: the
/// client's p50, and the CPU each hop spent per request (its own <c>GET /runtime</c> counters around each phase).
/// </summary>
public static class ProtocolBench
{
    public const string Http11 = "HTTP/1.1";
    public const string Http2 = "HTTP/2";

    /// <summary>The Gateway's option (<c>Gateway:Upstream:Http2For</c>) whose <c>AllRequests</c> moves every request, not only those with a body, to HTTP/2 in the optimized rung.</summary>
    public const string Http2ForKey = "Gateway__Upstream__Http2For";

    /// <summary>Phases per protocol and path: H1, H2, H1, H2 with two.</summary>
    private const int Rounds = 2;

    /// <summary>Gateway.Upstream's rung that relays over each protocol (with <see cref="Http2ForKey"/> at <c>AllRequests</c>).</summary>
    private static readonly (string Protocol, string Rung)[] Protocols = [(Http11, PerfMode.Naive), (Http2, PerfMode.Optimized)];

    private static readonly string[] Paths = ["products", "catalog", "upload", "download"];

    /// <summary>
    /// One path over one protocol: its requests over every phase, the failed ones, the client's p50, and CPU
    /// milliseconds per request in the Gateway and in each service behind it.
    /// </summary>
    public sealed record Row(string Path, string Protocol, long Requests, long Failed, double P50Ms, double GatewayCpuMsPerRequest, IReadOnlyDictionary<string, double> UpstreamCpuMsPerRequest);

    /// <summary><paramref name="Requests"/> per phase of products and catalog, <paramref name="UploadRequests"/> of upload and download.</summary>
    public sealed record Options(string OutputDirectory, int ProductCount, int Requests, int UploadRequests, int UploadMiB, TimeSpan WarmUp, string Configuration);

    public static async Task<IReadOnlyList<Row>> RunAsync(Options options, Action<string> progress, CancellationToken cancellationToken)
    {
        var environment = new Dictionary<string, string> { [Http2ForKey] = "AllRequests" };
        var system = await LocalSystem.LocalSystem.StartAsync(
            new LocalSystemOptions { ProductCount = options.ProductCount, Configuration = options.Configuration, Environment = environment }, cancellationToken);
        await using var _ = system;
        await FlagsFile.WriteAsync(system.FlagsFile, FlagsFile.Defaults(), cancellationToken);
        using var client = new HttpClient { BaseAddress = system.Gateway.BaseAddress, Timeout = TimeSpan.FromMinutes(10) };

        var uploadBytes = options.UploadMiB * 1_048_576L;
        var requests = new BenchRequests(uploadBytes, await SyntheticFileContent.StoreAsync(client, uploadBytes, cancellationToken));
        var rows = new List<Row>();
        foreach (var path in Paths)
        {
            rows.AddRange(await MeasurePathAsync(system, client, BenchScenarios.Find(path), requests, options, progress, cancellationToken));
        }

        return rows;
    }

    /// <summary>One path: each protocol warmed up as bench warms a phase, then H1, H2, H1, H2, each measured.</summary>
    private static async Task<IEnumerable<Row>> MeasurePathAsync(
        LocalSystem.LocalSystem system, HttpClient client, BenchScenario scenario, BenchRequests requests, Options options, Action<string> progress, CancellationToken cancellationToken)
    {
        var services = system.Services.Where(s => scenario.Services.Contains(s.Name)).ToList();
        var perPhase = scenario.Uploads || scenario.Downloads ? options.UploadRequests : options.Requests;
        var warmUpRequests = scenario.Uploads || scenario.Downloads ? 2 : 4;
        var buffer = scenario.ReadBufferBytes;
        // Warm-up uploads are deleted as they are answered; measured ones after the phase's counters are read.
        HttpRequestMessage WarmUp() => scenario.Request(requests).DeletesWhatItCreates("/api", "/api/uploads/{id}");

        // Past tier-0 code on both protocols (the Gateway's HTTP/2 client and the services' HTTP/2 server are code of their own).
        foreach (var (protocol, rung) in Protocols)
        {
            progress($"{scenario.Name}: warming up over {protocol}");
            await ServeAsync(system, client, rung, cancellationToken);
            await BenchRunner.WarmUpAsync(client, () => (protocol, WarmUp()), services, options.WarmUp, buffer, cancellationToken);
        }

        var stats = Protocols.ToDictionary(p => p.Protocol, p => new ModeStats(p.Protocol));
        var cpuSeconds = Protocols.ToDictionary(p => p.Protocol, _ => services.ToDictionary(s => s.Name, _ => 0.0));
        for (var round = 1; round <= Rounds; round++)
        {
            foreach (var (protocol, rung) in Protocols)
            {
                await ServeAsync(system, client, rung, cancellationToken);
                await LoadRunner.RunAsync(client, _ => (protocol, WarmUp()), warmUpRequests, concurrency: 1, cancellationToken, buffer);

                var before = await BenchRunner.ReadCountersAsync(services, cancellationToken);
                var phase = (await LoadRunner.RunAsync(client, _ => (protocol, scenario.Request(requests)), perPhase, concurrency: 1, cancellationToken, buffer, keysInOrder: [protocol]))[0];
                var after = await BenchRunner.ReadCountersAsync(services, cancellationToken);
                await DeleteUploadsAsync(system, client, keep: requests.DownloadId!, cancellationToken);

                foreach (var service in services)
                {
                    cpuSeconds[protocol][service.Name] += after[service.Name].CpuSeconds - before[service.Name].CpuSeconds;
                }

                stats[protocol].Add(phase);
                var cpu = string.Join(", ", services.Select(s => Invariant($"{s.Name} {(after[s.Name].CpuSeconds - before[s.Name].CpuSeconds) * 1000 / Math.Max(1, phase.Count):0.0}")));
                progress(Invariant($"{scenario.Name}, round {round}, {protocol}: {phase.Count} requests, {phase.Errors} failed, p50 {phase.PercentileMs(50):0.0} ms; CPU ms per request: {cpu}"));
            }
        }

        return Protocols.Select(p =>
        {
            var s = stats[p.Protocol];
            double PerRequest(string service) => cpuSeconds[p.Protocol][service] * 1000 / Math.Max(1, s.Count);
            return new Row(scenario.Name, p.Protocol, s.Count, s.Errors, s.PercentileMs(50), PerRequest(system.Gateway.Name),
                services.Where(x => x != system.Gateway).ToDictionary(x => x.Name, x => PerRequest(x.Name)));
        });
    }

    /// <summary>Gateway.Upstream set to <paramref name="rung"/> in the flags file, then requests until the Gateway says it serves it.</summary>
    private static async Task ServeAsync(LocalSystem.LocalSystem system, HttpClient client, string rung, CancellationToken cancellationToken)
    {
        await FlagsFile.SetAsync(system.FlagsFile, new Dictionary<string, string> { [Pitfalls.GatewayUpstream] = rung }, cancellationToken);
        // A cheap request through the Gateway (the Uploads' 404): the Gateway's rung is in every proxied answer.
        await BenchRunner.UntilServedAsync(client, "/api/uploads/protocol-bench-probe", $"{Pitfalls.GatewayUpstream}={rung}", cancellationToken);
    }

    /// <summary>Every stored upload but the download's, deleted through the Gateway, so the uploads do not fill the disk.</summary>
    private static async Task DeleteUploadsAsync(LocalSystem.LocalSystem system, HttpClient client, string keep, CancellationToken cancellationToken)
    {
        foreach (var id in system.StoredUploads().Where(id => id != keep))
        {
            using var response = await client.DeleteAsync($"/api/uploads/{id}", cancellationToken);
            response.EnsureSuccessStatusCode();
        }
    }

    /// <summary>report.md: how the rows were measured, by <paramref name="command"/>, then <see cref="Table"/>.</summary>
    public static string Markdown(Options options, IReadOnlyList<Row> rows, string command) => MadeBy.Report(
        "Gateway.Upstream: HTTP/1.1 and HTTP/2 from the Gateway to the services, side by side", command, MachineInfo.Now(options.Configuration),
        Invariant($"{options.ProductCount:N0} products, {options.UploadMiB} MiB uploads and download"),
        Invariant($$"""
        One replica of each service (LocalSystem), every flag optimized but Gateway.Upstream, and the Gateway set to relay
        every request over HTTP/2 in the optimized rung (`{{Http2ForKey}}=AllRequests`): naive relays over HTTP/1.1,
        optimized over cleartext HTTP/2; the client reaches the Gateway over HTTP/1.1 in both. Paths: `products` (GET
        /api/products: Gateway → Frontend.Api → Catalog.Api; Frontend.Api calls the Catalog over HTTP/1.1 in both),
        `catalog` (GET /api/catalog/products), `upload` (POST /api/uploads, one multipart file) and `download` (GET
        /api/uploads/{id}, read with a 64 KB buffer). Each path: both protocols warmed up as `bench` warms a phase, then
        {{Rounds}} rounds of HTTP/1.1 then HTTP/2, each after the flags file is rewritten and a response shows the rung, and a
        few warm-up requests; {{options.Requests}} (products, catalog) or {{options.UploadRequests}} (upload, download) requests one at a time per phase.
        p50: the client's, over every phase of the protocol. CPU ms per request: each service's own counters (`GET /runtime`)
        before and after each phase, over the requests; uploads are deleted after the phase's counters are read.
        """),
        Table(rows));

    /// <summary>The table the report and the pitfall's page show: each path over each protocol, and HTTP/2 ÷ HTTP/1.1.</summary>
    public static string Table(IReadOnlyList<Row> rows)
    {
        var upstream = rows.SelectMany(r => r.UpstreamCpuMsPerRequest.Keys).Distinct().ToList();
        IEnumerable<string> PathRows(string path)
        {
            var h1 = rows.SingleOrDefault(r => r.Path == path && r.Protocol == Http11);
            var h2 = rows.SingleOrDefault(r => r.Path == path && r.Protocol == Http2);
            foreach (var row in new[] { h1, h2 }.OfType<Row>())
            {
                yield return Invariant($"| {row.Path} | {row.Protocol} | {row.Requests:N0} | {row.Failed:N0} | {Figures.Ms(row.P50Ms)} | {Figures.Number(row.GatewayCpuMsPerRequest)} |")
                    + string.Concat(upstream.Select(s => $" {Figures.Number(Upstream(row, s))} |"));
            }

            yield return $"| {path} | {Http2} ÷ {Http11} | | | {Figures.Ratio(h2?.P50Ms, h1?.P50Ms)} | {Figures.Ratio(h2?.GatewayCpuMsPerRequest, h1?.GatewayCpuMsPerRequest)} |"
                + string.Concat(upstream.Select(s => $" {Figures.Ratio(h2 is null ? null : Upstream(h2, s), h1 is null ? null : Upstream(h1, s))} |"));
        }

        return MarkdownTable.Of(
            $"| path | protocol | requests | failed | p50 ms | Gateway CPU ms/request |{string.Concat(upstream.Select(s => $" {s} CPU ms/request |"))}",
            $"|---|---|---:|---:|---:|---:|{string.Concat(upstream.Select(_ => "---:|"))}",
            rows.Select(r => r.Path).Distinct().OrderBy(p => Array.IndexOf(Paths, p)).SelectMany(PathRows));
    }

    private static double? Upstream(Row row, string service) => row.UpstreamCpuMsPerRequest.TryGetValue(service, out var ms) ? ms : null;
}
