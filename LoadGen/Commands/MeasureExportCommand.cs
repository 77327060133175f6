using System.CommandLine;
using System.Globalization;
using System.Text.Json;
using LoadGen.Load;
using LoadGen.LocalSystem;

namespace LoadGen.Commands;

/// <summary>
/// <c>measure-export</c>: the <c>Catalog.WriteStrategy</c> pitfall (seed 003). Starts the services, then
/// fetches Catalog.Api's CSV export straight from the Catalog, one at a time, one phase per mode. Run it
/// inside a network namespace whose loopback has a <c>tc netem</c> delay to see the pitfall at a high RTT
/// (README); on a plain loopback it shows the CPU and system-call cost alone.
/// </summary>
public static class MeasureExportCommand
{
    public sealed record ModeFigures(long Requests, long Errors, long Bytes, double P50Ms, double FirstByteP50Ms, double CatalogCpuMsPerRequest);

    public sealed record Result(ModeFigures Naive, ModeFigures Optimized, double P50Ratio);

    public static Command Create()
    {
        var products = new Option<int?>("--products") { Description = "Catalog size (default: the service default; the export is about 6 MB)." };
        var requests = new Option<int>("--requests") { Description = "Requests per mode.", DefaultValueFactory = _ => 5 };
        var json = new Option<bool>("--json") { Description = "Print one JSON line instead of a table." };

        var command = new Command("measure-export", "Start the system locally and compare the CSV export's write strategies.") { products, requests, json };
        command.SetAction(async (parse, cancellationToken) =>
        {
            await using var system = await LocalSystem.LocalSystem.StartAsync(new LocalSystemOptions { ProductCount = parse.GetValue(products) }, cancellationToken);
            using var client = new HttpClient { BaseAddress = system.Catalog.BaseAddress, Timeout = TimeSpan.FromMinutes(10) };
            var figures = new List<ModeFigures>();
            foreach (var mode in new[] { "naive", "optimized" })
            {
                // One phase per mode, so the Catalog's CPU time can be charged to it.
                await LoadRunner.RunAsync(client, "/catalog/export", [mode], requests: 2, concurrency: 1, cancellationToken);
                var before = await system.Catalog.ReadRuntimeCountersAsync(cancellationToken);
                var s = (await LoadRunner.RunAsync(client, "/catalog/export", [mode], parse.GetValue(requests), concurrency: 1, cancellationToken))[0];
                var after = await system.Catalog.ReadRuntimeCountersAsync(cancellationToken);
                figures.Add(new ModeFigures(s.Count, s.Errors, s.MeanBodyBytes, s.PercentileMs(50), s.FirstBytePercentileMs(50), (after.CpuSeconds - before.CpuSeconds) * 1000 / Math.Max(1, s.Count)));
            }

            var result = new Result(figures[0], figures[1], figures[1].P50Ms / figures[0].P50Ms);
            if (parse.GetValue(json))
            {
                Console.WriteLine(JsonSerializer.Serialize(result, JsonSerializerOptions.Web));
            }
            else
            {
                Console.WriteLine($"GET {system.Catalog.BaseAddress}catalog/export, one at a time, {parse.GetValue(requests)} requests per mode");
                Console.WriteLine("| mode | body bytes | first byte p50 ms | p50 ms | Catalog.Api CPU ms per request | errors |");
                Console.WriteLine("|---|---:|---:|---:|---:|---:|");
                foreach (var (mode, f) in new[] { ("naive", result.Naive), ("optimized", result.Optimized) })
                {
                    Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"| {mode} | {f.Bytes:N0} | {f.FirstByteP50Ms:F1} | {f.P50Ms:F0} | {f.CatalogCpuMsPerRequest:F0} | {f.Errors} |"));
                }

                Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"| optimized / naive | | | {result.P50Ratio:F2} | {result.Optimized.CatalogCpuMsPerRequest / result.Naive.CatalogCpuMsPerRequest:F2} | |"));
            }

            return figures.Any(f => f.Errors > 0) ? 1 : 0;
        });
        return command;
    }
}
