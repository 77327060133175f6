using System.CommandLine;
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
        var url = new Option<Uri?>("--url") { Description = "Gateway base address (default: services__gateway__http__0, then http://127.0.0.1:5100)." };
        var path = new Option<string>("--path") { Description = "Path to GET.", DefaultValueFactory = _ => "/api/products" };
        var requests = new Option<int>("--requests") { Description = "Requests in total.", DefaultValueFactory = _ => 40 };
        var concurrency = new Option<int>("--concurrency") { Description = "Requests in flight.", DefaultValueFactory = _ => 4 };
        var modes = new Option<string[]>("--mode") { Description = "naive, optimized, or both (interleaved).", DefaultValueFactory = _ => ["naive", "optimized"], AllowMultipleArgumentsPerToken = true };

        var command = new Command("run", "Send a bounded burst of requests and print latency by mode.") { url, path, requests, concurrency, modes };
        command.SetAction(async (parse, cancellationToken) =>
        {
            var target = parse.GetValue(url) ?? DefaultGateway();
            using var client = new HttpClient { BaseAddress = target, Timeout = TimeSpan.FromMinutes(5) };
            var stats = await LoadRunner.RunAsync(client, parse.GetValue(path)!, Modes(parse.GetValue(modes)!), parse.GetValue(requests), parse.GetValue(concurrency), cancellationToken);
            Report.PrintLatency(target, parse.GetValue(path)!, stats);
            return stats.Any(s => s.Errors > 0) ? 1 : 0;
        });
        return command;
    }

    internal static string[] Modes(string[] given) =>
        given.SelectMany(m => m == "both" ? ["naive", "optimized"] : new[] { m }).Distinct().ToArray();

    private static Uri DefaultGateway() =>
        new(Environment.GetEnvironmentVariable("services__gateway__http__0") ?? "http://127.0.0.1:5100");
}
