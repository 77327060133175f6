using Bench.Sampling;
using System.Diagnostics;
using System.Globalization;
using System.Text;
using HttpPerf.ServiceDefaults.Contract;
using Bench.LocalSystem;

namespace Bench.Benches;

/// <summary>
/// The AppHost as the README starts it, <c>dotnet run -c Release --project AppHost</c> (with <c>-- --containers</c>),
/// ready once a product list and a catalog come back through its Gateway; stopped with SIGTERM, as its console's
/// Ctrl+C would, so DCP removes what it started.
/// </summary>
internal sealed class AppHostProcess : IAsyncDisposable
{
    /// <summary>The Gateway's address under the AppHost (its launch profile's, which the README names).</summary>
    public static readonly Uri Gateway = new("http://localhost:5100");

    private readonly System.Diagnostics.Process _run;
    private readonly StringBuilder _log = new();

    private AppHostProcess(System.Diagnostics.Process run) => _run = run;

    public static async Task<AppHostProcess> StartAsync(bool containers, string configuration, IReadOnlyList<string> settings, CancellationToken cancellationToken)
    {
        // The phase before may still be stopping (DCP stops the services after the AppHost has gone): a minute's grace.
        using var probe = new HttpClient { BaseAddress = Gateway, Timeout = TimeSpan.FromSeconds(2) };
        for (var waited = 0; await AnswersAsync(probe, "/health", cancellationToken); waited++)
        {
            if (waited == 60)
            {
                throw new InvalidOperationException($"Something already answers at {Gateway}: stop it (an AppHost already running?) and run again.");
            }

            await Task.Delay(TimeSpan.FromSeconds(1), cancellationToken);
        }

        var start = new ProcessStartInfo("dotnet")
        {
            WorkingDirectory = LocalSystem.LocalSystem.RepositoryRoot(),
            RedirectStandardOutput = true,
            RedirectStandardError = true,
        };
        foreach (var argument in (string[])["run", "-c", configuration, "--project", "AppHost", "--", .. containers ? (string[])["--containers"] : [], .. settings])
        {
            start.ArgumentList.Add(argument);
        }

        var apphost = new AppHostProcess(System.Diagnostics.Process.Start(start) ?? throw new InvalidOperationException("dotnet did not start."));
        apphost._run.OutputDataReceived += (_, e) => apphost.Keep(e.Data);
        apphost._run.ErrorDataReceived += (_, e) => apphost.Keep(e.Data);
        apphost._run.BeginOutputReadLine();
        apphost._run.BeginErrorReadLine();
        try
        {
            // Container mode may build four images with the SDK first.
            await apphost.WaitUntilServingAsync(TimeSpan.FromMinutes(containers ? 20 : 5), cancellationToken);
            return apphost;
        }
        catch
        {
            await apphost.DisposeAsync();
            throw;
        }
    }

    private void Keep(string? line)
    {
        lock (_log)
        {
            _log.AppendLine(line);
            if (_log.Length > 20_000)
            {
                _log.Remove(0, _log.Length - 10_000);
            }
        }
    }

    private async Task WaitUntilServingAsync(TimeSpan timeout, CancellationToken cancellationToken)
    {
        using var client = new HttpClient { BaseAddress = Gateway, Timeout = TimeSpan.FromSeconds(30) };
        var until = Stopwatch.GetTimestamp() + (long)(timeout.TotalSeconds * Stopwatch.Frequency);
        while (Stopwatch.GetTimestamp() < until)
        {
            if (_run.HasExited)
            {
                throw new InvalidOperationException($"The AppHost ended with {_run.ExitCode} before it served: {Tail()}");
            }

            if (await AnswersAsync(client, "/api/products", cancellationToken) && await AnswersAsync(client, "/api/catalog/products", cancellationToken))
            {
                return;
            }

            await Task.Delay(TimeSpan.FromSeconds(2), cancellationToken);
        }

        throw new TimeoutException($"The AppHost's Gateway did not serve a product list and a catalog within {timeout.TotalMinutes:0} min: {Tail()}");
    }

    private string Tail()
    {
        lock (_log)
        {
            var text = _log.ToString();
            return text.Length > 2_000 ? text[^2_000..] : text;
        }
    }

    public async ValueTask DisposeAsync()
    {
        if (!_run.HasExited)
        {
            // The AppHost itself, under dotnet run: SIGTERM is what it stops on (it ignores SIGINT in the background).
            var apphost = ProcessFaults.WithDescendants(_run.Id)
                .Intersect(CpuAccount.Processes("AppHost")).FirstOrDefault();
            await ProcessFaults.RunAsync("kill", "-TERM", (apphost == 0 ? _run.Id : apphost).ToString(CultureInfo.InvariantCulture));
            using var wait = new CancellationTokenSource(TimeSpan.FromMinutes(2));
            try
            {
                await _run.WaitForExitAsync(wait.Token);
            }
            catch (OperationCanceledException)
            {
                _run.Kill(entireProcessTree: true);
            }
        }

        _run.Dispose();
    }

    /// <summary>Whether <paramref name="path"/> answers 2xx, every hop optimized, its body read to the end.</summary>
    internal static async Task<bool> AnswersAsync(HttpClient client, string path, CancellationToken cancellationToken)
    {
        try
        {
            using var request = new HttpRequestMessage(HttpMethod.Get, path);
            request.Headers.Add(PerfMode.RequestHeader, PerfMode.Optimized);
            using var response = await client.SendAsync(request, HttpCompletionOption.ResponseHeadersRead, cancellationToken);
            await response.Content.CopyToAsync(Stream.Null, cancellationToken);
            return response.IsSuccessStatusCode;
        }
        catch (Exception error) when (error is HttpRequestException or TaskCanceledException or IOException)
        {
            return false;
        }
    }
}
