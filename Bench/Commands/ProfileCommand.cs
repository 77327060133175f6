using System.CommandLine;
using System.Diagnostics;
using System.Globalization;
using System.Text;
using Bench.Benches;

namespace Bench.Commands;

/// <summary>
/// <c>profile</c> (root, Linux): where each hop's CPU goes on one route. It starts the services as fresh processes with
/// <c>DOTNET_PerfMapEnabled=1</c> (so <c>perf</c> can name JIT-compiled .NET methods), warms them up, then samples them
/// with <c>perf record</c> while the requests run one at a time, and splits each hop's samples into kinds of work by
/// where they landed: the kernel's copies and its network stack, SQLite, System.Text.Json, the HTTP stack, YARP,
/// telemetry, the lesson's own code, the GC and the rest of the runtime. Each hop's CPU per request is also read from
/// its own counters (<c>GET /runtime</c>), as the bench reads it.
/// </summary>
public static class ProfileCommand
{
    private static readonly (string Kind, Func<string, string, bool> Matches)[] Kinds =
    [
        ("kernel: copies", (dso, sym) => dso.Contains("kernel", StringComparison.Ordinal) && (sym.Contains("copy", StringComparison.Ordinal) || sym.Contains("memcpy", StringComparison.Ordinal) || sym.Contains("memset", StringComparison.Ordinal))),
        ("kernel: network", (dso, sym) => dso.Contains("kernel", StringComparison.Ordinal) && (sym.StartsWith("tcp", StringComparison.Ordinal) || sym.Contains("skb", StringComparison.Ordinal) || sym.StartsWith("ip", StringComparison.Ordinal) || sym.Contains("sock", StringComparison.Ordinal) || sym.StartsWith("__dev", StringComparison.Ordinal) || sym.StartsWith("net", StringComparison.Ordinal) || sym.StartsWith("__tcp", StringComparison.Ordinal) || sym.StartsWith("loopback", StringComparison.Ordinal) || sym.Contains("_xmit", StringComparison.Ordinal))),
        ("kernel: other", (dso, _) => dso.Contains("kernel", StringComparison.Ordinal)),
        ("SQLite", (dso, _) => dso.Contains("sqlite", StringComparison.OrdinalIgnoreCase)),
        ("System.Text.Json", (_, sym) => sym.Contains("System.Text.Json", StringComparison.Ordinal) || sym.Contains("System.Text.Encodings.Web", StringComparison.Ordinal)),
        ("Kestrel, HttpClient, pipes, sockets", (_, sym) => sym.Contains("Microsoft.AspNetCore.Server", StringComparison.Ordinal) || sym.Contains("System.Net.", StringComparison.Ordinal) || sym.Contains("System.IO.Pipelines", StringComparison.Ordinal) || sym.Contains("Microsoft.AspNetCore.Http", StringComparison.Ordinal)),
        ("YARP", (_, sym) => sym.Contains("Yarp.", StringComparison.Ordinal)),
        ("telemetry", (_, sym) => sym.Contains("OpenTelemetry", StringComparison.Ordinal) || sym.Contains("System.Diagnostics", StringComparison.Ordinal) || sym.Contains("HttpPerf.ServiceDefaults", StringComparison.Ordinal)),
        ("the lesson's code", (_, sym) => sym.Contains("Catalog.Api", StringComparison.Ordinal) || sym.Contains("Frontend.Api", StringComparison.Ordinal) || sym.Contains("Gateway.", StringComparison.Ordinal) || sym.Contains("Uploads.Api", StringComparison.Ordinal)),
        ("memory copies (libc, CoreLib)", (dso, sym) => sym.Contains("memmove", StringComparison.OrdinalIgnoreCase) || sym.Contains("memcpy", StringComparison.Ordinal) || sym.Contains("Buffer.Memmove", StringComparison.Ordinal)),
        ("JIT", (dso, _) => dso.Contains("libclrjit", StringComparison.Ordinal)),
        ("GC", (dso, sym) => dso.Contains("coreclr", StringComparison.Ordinal) && (sym.Contains("gc", StringComparison.Ordinal) || sym.Contains("GC", StringComparison.Ordinal))),
        ("runtime: other", (_, _) => true),
    ];

    public static Command Create()
    {
        var path = new Option<string>("--path") { Description = "The route through the Gateway.", DefaultValueFactory = _ => "/api/products" };
        var mode = new Option<string>("--mode") { Description = "The mode every hop serves (X-Perf-Mode).", DefaultValueFactory = _ => PerfMode.Optimized };
        var requests = new Option<int>("--requests") { Description = "Requests sampled, one at a time.", DefaultValueFactory = _ => 20 };
        var warmUp = new Option<int>("--warmup") { Description = "Seconds of warm-up before sampling, as bench warms up (then on while the hops still spend over 3% of the time compiling, up to three times as long).", DefaultValueFactory = _ => (int)BenchOptions.DefaultWarmUp.TotalSeconds };
        var products = new Option<int?>("--products") { Description = "Catalog size (default: the service default, about 25 MB of JSON)." };
        var output = new Option<string?>("--out") { Description = "Folder for perf.data and profile.md (default: a new temp folder)." };
        var env = new Option<string[]>("--env") { Description = "KEY=VALUE for every service's environment, to see what a setting changes (repeatable).", AllowMultipleArgumentsPerToken = false };
        var command = new Command("profile", "Sample each hop with perf while one route runs one request at a time, and split its CPU by kind of work (root, Linux).")
        {
            path, mode, requests, warmUp, products, output, env,
        };
        command.SetAction(async (parse, cancellationToken) =>
        {
            var folder = parse.GetValue(output) ?? Directory.CreateTempSubdirectory("httpperf-profile-").FullName;
            Directory.CreateDirectory(folder);
            var settings = (parse.GetValue(env) ?? []).Select(e => e.Split('=', 2)).ToDictionary(e => e[0], e => e.Length > 1 ? e[1] : "");
            var markdown = await RunAsync(parse.GetValue(path)!, parse.GetValue(mode)!, parse.GetValue(requests), TimeSpan.FromSeconds(parse.GetValue(warmUp)), parse.GetValue(products), settings, folder, cancellationToken);
            await File.WriteAllTextAsync(Path.Combine(folder, "profile.md"), markdown, cancellationToken);
            Console.WriteLine(markdown);
            Console.WriteLine($"perf.data and profile.md in {folder}");
            return 0;
        });
        return command;
    }

    private static async Task<string> RunAsync(string path, string mode, int requests, TimeSpan warmUp, int? products, IReadOnlyDictionary<string, string> settings, string folder, CancellationToken cancellationToken)
    {
        var environment = new Dictionary<string, string>(settings)
        {
            ["DOTNET_PerfMapEnabled"] = "1",
            // JIT-compiled code in plain executable memory, not W^X's double mapping, which perf would name instead of the perf map.
            ["DOTNET_EnableWriteXorExecute"] = "0",
            [SystemContract.CatalogEnableBaseline] = "true",
            [SystemContract.FrontendEnableBaseline] = "true",
        };
        await using var system = await LocalSystem.LocalSystem.StartAsync(
            new LocalSystemOptions { ProductCount = products, WorkDirectory = Path.Combine(folder, "system"), Environment = environment }, cancellationToken);
        using var client = new HttpClient { BaseAddress = system.Gateway.BaseAddress, Timeout = TimeSpan.FromMinutes(2) };

        var hops = new[] { system.Gateway, system.Frontend, system.Catalog, system.Uploads };
        await BenchRunner.WarmUpAsync(client, () => (mode, Get(path, mode)), hops, warmUp, 64 * 1024, cancellationToken);

        var before = await Task.WhenAll(hops.Select(h => h.ReadRuntimeCountersAsync(cancellationToken)));
        var data = Path.Combine(folder, "perf.data");
        using var perf = Process.Start(new ProcessStartInfo("perf", ["record", "-F", "2999", "-o", data, "-p", string.Join(",", hops.Select(h => h.ProcessId))])
        {
            RedirectStandardError = true,
            RedirectStandardOutput = true,
        }) ?? throw new InvalidOperationException("perf could not start.");
        await Task.Delay(TimeSpan.FromSeconds(1), cancellationToken); // perf attaches
        var started = Stopwatch.GetTimestamp();
        var stats = (await LoadRunner.RunAsync(client, _ => (mode, Get(path, mode)), requests, concurrency: 1, cancellationToken))[0];
        var bytes = stats.Bytes;
        var elapsed = Stopwatch.GetElapsedTime(started);
        var after = await Task.WhenAll(hops.Select(h => h.ReadRuntimeCountersAsync(cancellationToken)));
        Process.Start("kill", ["-INT", perf.Id.ToString(CultureInfo.InvariantCulture)])!.WaitForExit();
        await perf.WaitForExitAsync(cancellationToken);

        // Each sample as "pid sym dso" (self time: where the CPU was, not who called it).
        var samples = new Dictionary<(int Pid, string Kind), int>();
        var symbols = new Dictionary<(int Pid, string Symbol), int>();
        using (var script = Process.Start(new ProcessStartInfo("perf", ["script", "-i", data, "-F", "pid,ip,sym,dso"])
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
        })!)
        {
            _ = script.StandardError.ReadToEndAsync(cancellationToken);
            while (await script.StandardOutput.ReadLineAsync(cancellationToken) is { } line)
            {
                var (pid, sym, dso) = ParseSample(line);
                if (pid == 0)
                {
                    continue;
                }

                var kind = Kinds.First(k => k.Matches(dso, sym)).Kind;
                samples[(pid, kind)] = samples.GetValueOrDefault((pid, kind)) + 1;
                symbols[(pid, sym)] = symbols.GetValueOrDefault((pid, sym)) + 1;
            }

            await script.WaitForExitAsync(cancellationToken);
        }

        var md = new StringBuilder();
        md.AppendLine(CultureInfo.InvariantCulture, $"# Profile: GET {path}, {mode}, {requests} requests one at a time");
        md.AppendLine();
        md.AppendLine(CultureInfo.InvariantCulture, $"Made by `dotnet run -c Release --project Bench -- profile --path {path} --mode {mode} --requests {requests} --warmup {warmUp.TotalSeconds}{string.Concat(settings.Select(s => $" --env {s.Key}={s.Value}"))}` on {Environment.ProcessorCount} cores, {DateTime.UtcNow:yyyy-MM-dd HH:mm} UTC: {bytes / (double)requests / 1e6:F1} MB a response, {elapsed.TotalMilliseconds / requests:F0} ms a request.");
        md.AppendLine("CPU ms per request is each hop's own counter (`GET /runtime`); the split is perf's samples (2,999 a second, self time) by where they landed.");
        md.AppendLine();
        md.AppendLine("| hop | CPU ms per request | " + string.Join(" | ", Kinds.Select(k => k.Kind)) + " |");
        md.AppendLine("|---|---:|" + string.Concat(Kinds.Select(_ => "---:|")));
        for (var i = 0; i < hops.Length; i++)
        {
            var cpuMs = (after[i].CpuSeconds - before[i].CpuSeconds) * 1000 / requests;
            if (cpuMs < 1)
            {
                continue; // not on this route
            }

            var pid = hops[i].ProcessId;
            var total = Kinds.Sum(k => samples.GetValueOrDefault((pid, k.Kind)));
            md.Append(CultureInfo.InvariantCulture, $"| {hops[i].Name} | {cpuMs:F1} |");
            foreach (var (kind, _) in Kinds)
            {
                var share = total == 0 ? 0 : samples.GetValueOrDefault((pid, kind)) / (double)total;
                md.Append(CultureInfo.InvariantCulture, $" {share * cpuMs:F1} |");
            }

            md.AppendLine();
        }

        for (var i = 0; i < hops.Length; i++)
        {
            var hop = hops[i];
            if ((after[i].CpuSeconds - before[i].CpuSeconds) * 1000 / requests < 1)
            {
                continue;
            }

            var top = symbols.Where(s => s.Key.Pid == hop.ProcessId).OrderByDescending(s => s.Value).Take(25).ToList();
            var total = symbols.Where(s => s.Key.Pid == hop.ProcessId).Sum(s => s.Value);
            md.AppendLine();
            md.AppendLine(CultureInfo.InvariantCulture, $"{hop.Name}'s hottest symbols (share of its samples):");
            md.AppendLine();
            foreach (var (key, count) in top)
            {
                md.AppendLine(CultureInfo.InvariantCulture, $"- {count * 100.0 / total:F1}% `{Shorten(key.Symbol)}`");
            }
        }

        return md.ToString();
    }

    private static HttpRequestMessage Get(string path, string mode)
    {
        var request = new HttpRequestMessage(HttpMethod.Get, path);
        request.Headers.Add(PerfMode.RequestHeader, mode);
        return request;
    }

    /// <summary>"  1234  7f12ab symbol (dso)" as perf script prints it with -F pid,ip,sym,dso.</summary>
    private static (int Pid, string Symbol, string Dso) ParseSample(string line)
    {
        var text = line.Trim();
        var space = text.IndexOf(' ', StringComparison.Ordinal);
        if (space <= 0 || !int.TryParse(text[..space], NumberStyles.None, CultureInfo.InvariantCulture, out var pid))
        {
            return (0, "", "");
        }

        var rest = text[(space + 1)..].Trim();
        var ip = rest.IndexOf(' ', StringComparison.Ordinal);
        rest = ip < 0 ? "" : rest[(ip + 1)..].Trim();
        var open = rest.LastIndexOf(" (", StringComparison.Ordinal);
        var (sym, dso) = open < 0 ? (rest, "") : (rest[..open], rest[(open + 2)..].TrimEnd(')'));
        return (pid, sym, dso);
    }

    private static string Shorten(string symbol) => symbol.Length > 140 ? symbol[..140] + "…" : symbol;
}
