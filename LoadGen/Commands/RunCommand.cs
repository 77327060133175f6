using System.CommandLine;
using System.Runtime.InteropServices;
using HttpPerf.ServiceDefaults.Contract;
using LoadGen.Control;
using LoadGen.Load;
using Microsoft.Extensions.Configuration;

namespace LoadGen.Commands;

/// <summary>
/// <c>run</c>: load against a running system (the Gateway found by service discovery under the AppHost, or
/// <c>--url</c>), modes interleaved, then a latency table by mode: a closed loop of <c>--requests</c>, or an open model
/// at <c>--rate</c> for <c>--duration</c> (or until stopped), with a control endpoint.
/// </summary>
public static class RunCommand
{
    public static Command Create()
    {
        var url = new Option<Uri?>("--url")
        {
            Description = "Gateway base address (default: services__gateway__http__0, then http://127.0.0.1:5100).",
            CustomParser = result =>
            {
                if (Uri.TryCreate(result.Tokens.Single().Value, UriKind.Absolute, out var uri))
                {
                    return uri;
                }

                result.AddError($"'{result.Tokens.Single().Value}' is not an absolute URL.");
                return null;
            },
        };
        var scenario = new Option<string>("--scenario") { Description = $"{string.Join(", ", Scenario.Known)}, a path to GET (\"/api/products\"), or a weighted mix (\"products=6,upload=1\").", DefaultValueFactory = _ => Scenario.DefaultMix };
        var sizeMb = new Option<int>("--size-mb") { Description = "Upload and download size in MiB.", DefaultValueFactory = _ => 10 };
        var requests = new Option<int>("--requests") { Description = "Requests in total.", DefaultValueFactory = _ => 40 };
        var concurrency = new Option<int>("--concurrency") { Description = "Requests in flight.", DefaultValueFactory = _ => 4 };
        var modes = new Option<string[]>("--mode") { Description = "flags (no X-Perf-Mode header: the flags file decides, as a dashboard flip does), both (naive and optimized interleaved by header), naive, or optimized.", DefaultValueFactory = _ => [ModeControl.Both], AllowMultipleArgumentsPerToken = true };
        var rate = new Option<double?>("--rate") { Description = "Open model: arrivals per second (latency from each intended start). Without it: a closed loop of --requests." };
        var duration = new Option<TimeSpan>("--duration")
        {
            Description = $"Open model: how long to send (e.g. 00:10:00), or {Infinite}: until stopped (Ctrl+C, or the AppHost stopping the resource).",
            DefaultValueFactory = _ => TimeSpan.FromSeconds(30),
            CustomParser = ParseDuration,
        };
        var warmup = new Option<int>("--warmup") { Description = "Requests sent one at a time before measuring, not recorded (the scenario mix in every mode, in turn).", DefaultValueFactory = _ => 0 };
        var adminKey = new Option<string?>("--admin-key") { Description = $"The Gateway's admin key, sent as {SystemContract.AdminKeyHeader} with every request: a Gateway that drops an anonymous X-Perf-Mode (Gateway:AllowModeOverride false, as a published stack has it) honours the admin's, so --mode both measures there too (default: env ADMIN_KEY, which no other user of the machine can read, as they can a command line, or the swarm secret /run/secrets/ADMIN_KEY)." };
        var controlPort = new Option<int?>("--control-port") { Description = "Open model: serve the control endpoint on this port: GET/PUT /rate and /mode, GET /status, POST /measure (default: env LOADGEN_CONTROL_PORT)." };

        var command = new Command("run", "Send load and print latency by mode.") { url, scenario, sizeMb, requests, concurrency, modes, rate, duration, warmup, adminKey, controlPort };
        command.SetAction(async (parse, cancellationToken) =>
        {
            var target = parse.GetValue(url) ?? DefaultGateway();
            using var client = new HttpClient { BaseAddress = target, Timeout = TimeSpan.FromMinutes(5) };
            if ((parse.GetValue(adminKey) ?? AdminKeyGiven()) is { Length: > 0 } key)
            {
                client.DefaultRequestHeaders.Add(SystemContract.AdminKeyHeader, key);
            }

            var uploadBytes = parse.GetValue(sizeMb) * 1024L * 1024;
            var load = Scenario.Parse(parse.GetValue(scenario)!, new ModeControl(parse.GetValue(modes)!), uploadBytes);
            await using var download = new DownloadFile(client, uploadBytes);
            await load.PrepareAsync(download, cancellationToken);
            if (parse.GetValue(warmup) is > 0 and var count)
            {
                await LoadRunner.RunAsync(client, load.Next, Math.Min(count, 1_000), concurrency: 1, cancellationToken);
            }

            IReadOnlyList<ModeStats> stats;
            if (parse.GetValue(rate) is { } perSecond)
            {
                var runner = new OpenModelRunner(client, load.Next, parse.GetValue(concurrency)).WithMetrics();
                runner.Rate.PerSecond = perSecond;
                var port = parse.GetValue(controlPort) ?? (int.TryParse(Environment.GetEnvironmentVariable("LOADGEN_CONTROL_PORT"), out var fromEnvironment) ? fromEnvironment : null);
                await using var control = port is { } p
                    ? await LoadControlHost.StartAsync(new LoadControl(runner, load.Modes, client, download), ControlUrl(p), cancellationToken: cancellationToken)
                    : null;
                // A run with no end ends when stopped, and then reports what it measured. The AppHost stops a resource
                // with SIGTERM; with System.CommandLine's own handling alone the process ended at once with 143 and no
                // report (tried here), with this one it returns its table within a second.
                using var stop = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
                using var sigterm = PosixSignalRegistration.Create(PosixSignal.SIGTERM, signal =>
                {
                    signal.Cancel = true;
                    stop.Cancel();
                });
                var run = runner.RunAsync(parse.GetValue(duration) is var given && given == Timeout.InfiniteTimeSpan ? null : given, stop.Token);
                await LiveView.ShowUntilAsync(run, runner);
                stats = (await run).Values.OrderBy(s => s.Mode, StringComparer.Ordinal).ToList();
            }
            else
            {
                stats = await LoadRunner.RunAsync(client, load.Next, parse.GetValue(requests), parse.GetValue(concurrency), cancellationToken);
            }

            Report.PrintLatency(target, parse.GetValue(scenario)!, stats);
            return stats.Any(s => s.Errors > 0) ? 1 : 0;
        });
        return command;
    }

    /// <summary>The <c>--duration</c> that means "until stopped".</summary>
    public const string Infinite = "infinite";

    // The key where the AppHost (an environment variable) or a swarm (a secret's file) gives it.
    private static string? AdminKeyGiven() => new ConfigurationBuilder()
        .AddEnvironmentVariables()
        .AddKeyPerFile(SystemContract.SecretsDirectory, optional: true)
        .Build()[SystemContract.LoadGenAdminKey];

    /// <summary>A positive time span, or the platform's <see cref="Timeout.InfiniteTimeSpan"/> for <see cref="Infinite"/>.</summary>
    private static TimeSpan ParseDuration(System.CommandLine.Parsing.ArgumentResult result)
    {
        var text = result.Tokens.Single().Value;
        if (string.Equals(text, Infinite, StringComparison.OrdinalIgnoreCase))
        {
            return Timeout.InfiniteTimeSpan;
        }

        if (TimeSpan.TryParse(text, System.Globalization.CultureInfo.InvariantCulture, out var span) && span > TimeSpan.Zero)
        {
            return span;
        }

        result.AddError($"'{text}' is neither a positive time span (00:10:00) nor '{Infinite}'.");
        return default;
    }

    // On this machine, loopback only; in a container (the AppHost's container mode), every address of the container's
    // own network namespace, or the host's published port could not reach it.
    private static string ControlUrl(int port) =>
        Environment.GetEnvironmentVariable("DOTNET_RUNNING_IN_CONTAINER") == "true" ? $"http://+:{port}" : $"http://localhost:{port}";

    private static Uri DefaultGateway() =>
        new(Environment.GetEnvironmentVariable("services__gateway__http__0") ?? "http://127.0.0.1:5100");
}
