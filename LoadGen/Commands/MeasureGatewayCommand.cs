using System.CommandLine;
using HttpPerf.ServiceDefaults.Flags;
using LoadGen.Load;
using LoadGen.LocalSystem;
using static System.FormattableString;

namespace LoadGen.Commands;

/// <summary>
/// <c>measure-gateway</c>: what the Gateway costs. First, the optimized 25 MB product list through the
/// Gateway and straight from Frontend.Api, requests alternating, one at a time. Then only the
/// <c>Gateway.Buffering</c> flag switched (flags file, every other flag optimized) under concurrent
/// fetches, sampling the Gateway's working set in each phase.
/// </summary>
public static class MeasureGatewayCommand
{
    public static Command Create()
    {
        var requests = new Option<int>("--requests") { Description = "Requests per measurement.", DefaultValueFactory = _ => 24 };
        var concurrency = new Option<int>("--concurrency") { Description = "Concurrent fetches in the buffering phases.", DefaultValueFactory = _ => 8 };

        var command = new Command("measure-gateway", "Start the system locally and measure the Gateway's overhead and its buffering pitfall.") { requests, concurrency };
        command.SetAction(async (parse, cancellationToken) =>
        {
            var count = parse.GetValue(requests);
            var parallel = parse.GetValue(concurrency);
            await using var system = await LocalSystem.LocalSystem.StartAsync(new LocalSystemOptions(), cancellationToken);
            using var viaGateway = new HttpClient { BaseAddress = system.Gateway.BaseAddress, Timeout = TimeSpan.FromMinutes(5) };
            using var direct = new HttpClient { BaseAddress = system.Frontend.BaseAddress, Timeout = TimeSpan.FromMinutes(5) };

            // Overhead: alternate the two paths so both see the same machine state.
            await LoadRunner.RunAsync(viaGateway, "/api/products", ["optimized"], 2, 1, cancellationToken);
            await LoadRunner.RunAsync(direct, "/products", ["optimized"], 2, 1, cancellationToken);
            var gatewayStats = new ModeStats("via Gateway");
            var directStats = new ModeStats("direct to Frontend.Api");
            for (var i = 0; i < count; i++)
            {
                Merge(gatewayStats, await LoadRunner.RunAsync(viaGateway, "/api/products", ["optimized"], 1, 1, cancellationToken));
                Merge(directStats, await LoadRunner.RunAsync(direct, "/products", ["optimized"], 1, 1, cancellationToken));
            }

            Console.WriteLine($"GET the product list, optimized, one at a time, {count} requests each, alternating");
            Console.WriteLine("| path | p50 ms | p90 ms | errors |");
            Console.WriteLine("|---|---:|---:|---:|");
            foreach (var s in new[] { gatewayStats, directStats })
            {
                Console.WriteLine(Invariant($"| {s.Mode} | {s.PercentileMs(50):F0} | {s.PercentileMs(90):F0} | {s.Errors} |"));
            }

            Console.WriteLine(Invariant($"| Gateway / direct | {gatewayStats.PercentileMs(50) / directStats.PercentileMs(50):F2} | {gatewayStats.PercentileMs(90) / directStats.PercentileMs(90):F2} | |"));

            Console.WriteLine();
            Console.WriteLine($"GET /api/products through the Gateway, {parallel} concurrent, {count} requests; only Gateway.Buffering switched");
            Console.WriteLine("| Gateway.Buffering | p50 ms | errors | peak working set Gateway MB | Frontend.Api MB | Catalog.Api MB |");
            Console.WriteLine("|---|---:|---:|---:|---:|---:|");
            var peaksByMode = new Dictionary<string, long>();
            foreach (var mode in new[] { "optimized", "naive" })
            {
                await FlagsFile.WriteAsync(system.FlagsFile, new Dictionary<string, string> { [Pitfalls.GatewayBuffering] = mode }, cancellationToken);
                await Task.Delay(TimeSpan.FromSeconds(2), cancellationToken);
                var sampler = new ResourceSampler(system.Services);
                var stats = await LoadRunner.RunAsync(viaGateway, "/api/products", [LoadRunner.FlagsFile], count, parallel, cancellationToken);
                var peaks = await sampler.StopAsync();
                peaksByMode[mode] = peaks["Gateway"];
                Console.WriteLine(Invariant($"| {mode} | {stats[0].PercentileMs(50):F0} | {stats[0].Errors} | {peaks["Gateway"] / 1048576.0:F0} | {peaks["Frontend.Api"] / 1048576.0:F0} | {peaks["Catalog.Api"] / 1048576.0:F0} |"));
            }

            Console.WriteLine(Invariant($"| optimized / naive | | | {(double)peaksByMode["optimized"] / peaksByMode["naive"]:F2} | | |"));
            return 0;
        });
        return command;
    }

    private static void Merge(ModeStats into, IReadOnlyList<ModeStats> single) => into.Add(single[0]);
}
