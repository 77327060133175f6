using System.CommandLine;
using LoadGen.Bench;

namespace LoadGen.Commands;

/// <summary>
/// <c>bench</c>: the project's performance table, reproducible on any machine without Aspire. Starts the
/// services per mode, runs every scenario, writes report.md, report.json and charts (see <see cref="BenchRunner"/>).
/// </summary>
public static class BenchCommand
{
    public static Command Create()
    {
        var output = new Option<string?>("--out") { Description = "Folder for report.md, report.json and the charts (default: docs/results/bench in the repository)." };
        var products = new Option<int?>("--products") { Description = "Catalog size (default: the service default, about 25 MB)." };
        var requests = Positive("--requests", "Requests one at a time per mode (latency).", 10);
        var concurrency = Positive("--concurrency", "Fetches in flight for memory and throughput.", 16);
        var concurrentRequests = Positive("--concurrent-requests", "Requests per mode at --concurrency.", 32);
        var uploadMb = Positive("--upload-mb", "Upload and download size in MiB.", 100);
        var uploads = Positive("--uploads", "Uploads and downloads per mode.", 5);
        products.Validators.Add(result =>
        {
            if (result.GetValueOrDefault<int?>() is < 1)
            {
                result.AddError("--products must be at least 1.");
            }
        });

        var command = new Command("bench", "Start the services per mode (naive, optimized, baseline), run every scenario, write the report.")
        {
            output, products, requests, concurrency, concurrentRequests, uploadMb, uploads,
        };
        command.SetAction(async (parse, cancellationToken) =>
        {
            var options = new BenchOptions
            {
                OutputDirectory = parse.GetValue(output) ?? Path.Combine(LocalSystem.LocalSystem.RepositoryRoot(), "docs", "results", "bench"),
                ProductCount = parse.GetValue(products),
                Requests = parse.GetValue(requests),
                Concurrency = parse.GetValue(concurrency),
                ConcurrentRequests = parse.GetValue(concurrentRequests),
                UploadMiB = parse.GetValue(uploadMb),
                UploadRequests = parse.GetValue(uploads),
            };
            var result = await BenchRunner.RunAsync(options, line => Console.Error.WriteLine(line), cancellationToken);
            var commandLine = string.Join(" ", ["dotnet run -c Release --project LoadGen --", .. parse.Tokens.Select(t => t.Value)]);
            await BenchReport.WriteAsync(result, commandLine, cancellationToken);
            Console.WriteLine(await File.ReadAllTextAsync(Path.Combine(options.OutputDirectory, BenchReport.MarkdownFile), cancellationToken));
            return result.Phases.Any(p => p.Errors > 0) ? 1 : 0;
        });
        return command;
    }

    private static Option<int> Positive(string name, string description, int defaultValue)
    {
        var option = new Option<int>(name) { Description = description, DefaultValueFactory = _ => defaultValue };
        option.Validators.Add(result =>
        {
            if (result.GetValueOrDefault<int>() < 1)
            {
                result.AddError($"{name} must be at least 1.");
            }
        });
        return option;
    }
}
