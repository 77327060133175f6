using System.CommandLine;
using LoadGen.Control;
using LoadGen.Load;

namespace LoadGen.Commands;

/// <summary>
/// <c>run</c>: a bounded burst of GETs against a running system (the Gateway found by service discovery
/// under the AppHost, or <c>--url</c>), modes interleaved, then a latency table by mode.
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
        var duration = new Option<TimeSpan>("--duration") { Description = "Open model: how long to send (at most 10 minutes).", DefaultValueFactory = _ => TimeSpan.FromSeconds(30) };
        var warmup = new Option<int>("--warmup") { Description = "Requests sent one at a time before measuring, not recorded (the scenario mix in every mode, in turn).", DefaultValueFactory = _ => 0 };
        var controlPort = new Option<int?>("--control-port") { Description = "Open model: serve GET/PUT /rate on this port to change the rate live (default: env LOADGEN_CONTROL_PORT)." };

        var command = new Command("run", "Send a bounded load and print latency by mode.") { url, scenario, sizeMb, requests, concurrency, modes, rate, duration, warmup, controlPort };
        command.SetAction(async (parse, cancellationToken) =>
        {
            var target = parse.GetValue(url) ?? DefaultGateway();
            using var client = new HttpClient { BaseAddress = target, Timeout = TimeSpan.FromMinutes(5) };
            var load = Scenario.Parse(parse.GetValue(scenario)!, new ModeControl(parse.GetValue(modes)!), parse.GetValue(sizeMb) * 1024L * 1024);
            await load.PrepareAsync(client, cancellationToken);
            if (parse.GetValue(warmup) is > 0 and var count)
            {
                await LoadRunner.RunAsync(client, load.Next, Math.Min(count, 1_000), concurrency: 1, cancellationToken);
            }

            IReadOnlyList<ModeStats> stats;
            if (parse.GetValue(rate) is { } perSecond)
            {
                var runner = new OpenModelRunner(client, load.Next, parse.GetValue(concurrency)).WithMetrics();
                runner.Rate.PerSecond = perSecond;
                var limit = TimeSpan.FromTicks(Math.Min(parse.GetValue(duration).Ticks, TimeSpan.FromMinutes(10).Ticks));
                var port = parse.GetValue(controlPort) ?? (int.TryParse(Environment.GetEnvironmentVariable("LOADGEN_CONTROL_PORT"), out var fromEnvironment) ? fromEnvironment : null);
                await using var control = port is { } p ? await LoadControlHost.StartAsync(runner.Rate, load.Modes, $"http://localhost:{p}", cancellationToken: cancellationToken) : null;
                var run = runner.RunAsync(limit, cancellationToken);
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

    private static Uri DefaultGateway() =>
        new(Environment.GetEnvironmentVariable("services__gateway__http__0") ?? "http://127.0.0.1:5100");
}
