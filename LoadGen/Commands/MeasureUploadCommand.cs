using System.CommandLine;
using System.Diagnostics;
using System.Net.Http.Json;
using HttpPerf.ServiceDefaults.Flags;
using LoadGen.Load;
using LoadGen.LocalSystem;
using static System.FormattableString;

namespace LoadGen.Commands;

/// <summary>
/// <c>measure-upload</c>: starts the system locally, then uploads one file of the given size through the
/// Gateway, request after request, in three phases: the raw sink (reads and discards: the limit), the
/// optimized reader, the naive reader, sampling Uploads.Api's working set in each. Then downloads the
/// stored file in both download modes, reading the body with a 4 KB and a 64 KB buffer. Only the
/// Uploads flags are switched (through the flags file), so the Gateway streams in every phase.
/// </summary>
public static class MeasureUploadCommand
{
    private static readonly int[] ReadBuffers = [4 * 1024, 64 * 1024];

    public static Command Create()
    {
        var sizeMb = new Option<int>("--size-mb") { Description = "File size in MiB.", DefaultValueFactory = _ => 100 };
        var requests = new Option<int>("--requests") { Description = "Uploads per phase.", DefaultValueFactory = _ => 3 };

        var command = new Command("measure-upload", "Start the system locally and measure uploads and downloads, naive vs optimized vs a raw sink.") { sizeMb, requests };
        command.SetAction(async (parse, cancellationToken) =>
        {
            var size = parse.GetValue(sizeMb) * 1024L * 1024;
            var count = parse.GetValue(requests);
            var environment = new Dictionary<string, string> { ["Uploads__EnableSink"] = "true" };
            await using var system = await LocalSystem.LocalSystem.StartAsync(new LocalSystemOptions { ProductCount = 100, Environment = environment }, cancellationToken);
            using var client = new HttpClient { BaseAddress = system.Gateway.BaseAddress, Timeout = TimeSpan.FromMinutes(10) };

            Console.WriteLine($"POST /api/uploads through the Gateway, one {size / 1048576} MiB file per request, {count} requests per phase");
            Console.WriteLine("| phase | MB/s (median) | seconds (median) | peak working set Uploads.Api MB | peak working set Gateway MB |");
            Console.WriteLine("|---|---:|---:|---:|---:|");
            string? storedId = null;
            var medians = new Dictionary<string, double>();
            foreach (var (phase, path, mode) in new[] { ("raw sink", "/api/uploads/sink", "optimized"), ("optimized", "/api/uploads", "optimized"), ("naive", "/api/uploads", "naive") })
            {
                await SetUploadFlagsAsync(system, mode, cancellationToken);
                await UploadAsync(client, path, 1024 * 1024, cancellationToken);
                var sampler = new ResourceSampler([system.Uploads, system.Gateway]);
                var seconds = new List<double>();
                for (var i = 0; i < count; i++)
                {
                    var (elapsed, id) = await UploadAsync(client, path, size, cancellationToken);
                    seconds.Add(elapsed.TotalSeconds);
                    storedId = id ?? storedId;
                }

                var peaks = await sampler.StopAsync();
                var median = seconds.Order().ElementAt(seconds.Count / 2);
                medians[phase] = size / 1048576.0 / median;
                Console.WriteLine(Invariant($"| {phase} | {medians[phase]:F0} | {median:F2} | {peaks["Uploads.Api"] / 1048576.0:F0} | {peaks["Gateway"] / 1048576.0:F0} |"));
            }

            Console.WriteLine(Invariant($"| optimized / naive | {medians["optimized"] / medians["naive"]:F2} | | | |"));
            Console.WriteLine(Invariant($"| optimized / raw sink | {medians["optimized"] / medians["raw sink"]:F2} | | | |"));

            Console.WriteLine();
            Console.WriteLine($"GET /api/uploads/{{id}} of the same file, {count} requests each");
            Console.WriteLine("| download mode | client read buffer | MB/s (median) | peak working set Uploads.Api MB |");
            Console.WriteLine("|---|---:|---:|---:|");
            foreach (var mode in new[] { "optimized", "naive" })
            {
                await SetUploadFlagsAsync(system, mode, cancellationToken);
                foreach (var buffer in ReadBuffers)
                {
                    var sampler = new ResourceSampler([system.Uploads]);
                    var stats = await LoadRunner.RunAsync(client, $"/api/uploads/{storedId}", [LoadRunner.FlagsFile], count, 1, cancellationToken, buffer);
                    var peaks = await sampler.StopAsync();
                    Console.WriteLine(Invariant($"| {mode} | {buffer / 1024} KB | {size / 1048576.0 / (stats[0].PercentileMs(50) / 1000):F0} | {peaks["Uploads.Api"] / 1048576.0:F0} |"));
                }
            }

            return 0;
        });
        return command;
    }

    private static async Task SetUploadFlagsAsync(LocalSystem.LocalSystem system, string mode, CancellationToken cancellationToken)
    {
        await FlagsFile.WriteAsync(system.FlagsFile, new Dictionary<string, string> { [Pitfalls.UploadsReader] = mode, [Pitfalls.UploadsDownload] = mode }, cancellationToken);
        await Task.Delay(TimeSpan.FromSeconds(2), cancellationToken);
    }

    private static async Task<(TimeSpan Elapsed, string? Id)> UploadAsync(HttpClient client, string path, long size, CancellationToken cancellationToken)
    {
        var started = Stopwatch.GetTimestamp();
        if (path.EndsWith("/sink", StringComparison.Ordinal))
        {
            using var response = await client.PostAsync(path, SyntheticFileContent.Create(size), cancellationToken);
            response.EnsureSuccessStatusCode();
            return (Stopwatch.GetElapsedTime(started), null);
        }

        var id = await SyntheticFileContent.StoreAsync(client, size, cancellationToken);
        return (Stopwatch.GetElapsedTime(started), id);
    }
}
