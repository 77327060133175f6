using System.CommandLine;
using LoadGen.Load;
using LoadGen.LocalSystem;

namespace LoadGen.Commands;

/// <summary>
/// <c>measure</c>: starts the four services as Release processes on loopback (same contract as the
/// AppHost), then for each mode in turn (optimized first, so the naive peak cannot hide in it) sends
/// the requests through the Gateway with <c>X-Perf-Mode</c> and samples every service's working set.
/// </summary>
public static class MeasureCommand
{
    public static Command Create()
    {
        var path = new Option<string>("--path") { Description = "Path to GET through the Gateway.", DefaultValueFactory = _ => "/api/products" };
        var requests = new Option<int>("--requests") { Description = "Measured requests per mode.", DefaultValueFactory = _ => 20 };
        var concurrency = new Option<int>("--concurrency") { Description = "Requests in flight.", DefaultValueFactory = _ => 1 };
        var products = new Option<int?>("--products") { Description = "Catalog size (default: the service default, about 25 MB)." };

        var command = new Command("measure", "Start the system locally and measure naive vs optimized, one phase each.") { path, requests, concurrency, products };
        command.SetAction(async (parse, cancellationToken) =>
        {
            await using var system = await LocalSystem.LocalSystem.StartAsync(new LocalSystemOptions { ProductCount = parse.GetValue(products) }, cancellationToken);
            using var client = new HttpClient { BaseAddress = system.Gateway.BaseAddress, Timeout = TimeSpan.FromMinutes(5) };
            var phases = new List<(ModeStats Stats, IReadOnlyDictionary<string, long> PeakWorkingSet)>();
            foreach (var mode in new[] { "optimized", "naive" })
            {
                await LoadRunner.RunAsync(client, parse.GetValue(path)!, [mode], requests: 2, concurrency: 1, cancellationToken);
                var sampler = new ResourceSampler(system.Services);
                var stats = await LoadRunner.RunAsync(client, parse.GetValue(path)!, [mode], parse.GetValue(requests), parse.GetValue(concurrency), cancellationToken);
                phases.Add((stats[0], await sampler.StopAsync()));
            }

            Report.PrintPhases(parse.GetValue(path)!, parse.GetValue(concurrency), phases);
            return phases.Any(p => p.Stats.Errors > 0) ? 1 : 0;
        });
        return command;
    }
}
