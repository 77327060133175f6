using System.CommandLine;
using System.Globalization;
using Bench.Latency;

namespace Bench.Commands;

/// <summary>
/// <c>latency</c>: seed 003's experiment over a TUN delay line at each round trip (<see cref="LatencyExperiment"/>);
/// needs root for the network namespace and the devices. <c>far-server</c> is the far end it starts, not for people.
/// </summary>
public static class LatencyCommand
{
    public static Command Create()
    {
        var roundTrips = new Option<string>("--rtt") { Description = "Round trips in ms, comma-separated.", DefaultValueFactory = _ => "100,158" };
        var requests = new Option<int>("--requests") { Description = "Requests per case on a warm connection (after one on a new connection).", DefaultValueFactory = _ => 3 };
        var products = new Option<int?>("--products") { Description = "Catalog size for the export cases (default: the service default, about 6 MB of CSV)." };
        var output = new Option<string?>("--out") { Description = "Folder for report.md and report.json (default: docs/results/latency in the repository)." };
        var command = new Command("latency", "Seed 003 on Kestrel: writes of 32 KB to 1 MB, transfers and the Catalog export over a delay line of each round trip (root).")
        {
            roundTrips, requests, products, output,
        };
        command.SetAction(async (parse, cancellationToken) =>
        {
            var options = new LatencyOptions
            {
                RoundTripsMs = parse.GetValue(roundTrips)!.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries).Select(r => int.Parse(r, CultureInfo.InvariantCulture)).ToList(),
                WarmRequests = parse.GetValue(requests),
                Products = parse.GetValue(products),
                OutputDirectory = parse.GetValue(output) ?? Path.Combine(LocalSystem.LocalSystem.RepositoryRoot(), "docs", "results", ResultsFolders.Latency),
            };
            var result = await LatencyExperiment.RunAsync(options, line => Console.WriteLine(line), cancellationToken);
            // Root, always: the delay line is a network namespace and two TUN devices.
            var markdown = LatencyReport.Render(result, MadeBy.Command(parse.Tokens.Select(t => t.Value), asRoot: true));
            await ReportFiles.WriteAsync(options.OutputDirectory, ReportFiles.Report, result, markdown, cancellationToken);
            Console.WriteLine(markdown);
            return 0;
        });
        return command;
    }

    public static Command CreateFarServer()
    {
        var address = new Option<string>("--address") { Required = true };
        var far = new Command(FarProcess.Command, "The far end of `latency` (started by it on the far side of the delay line).") { address };
        far.Hidden = true;
        far.SetAction(async (parse, cancellationToken) =>
        {
            await FarServer.RunAsync(parse.GetValue(address)!, cancellationToken);
            return 0;
        });
        return far;
    }
}
