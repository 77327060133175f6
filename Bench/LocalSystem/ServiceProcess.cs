using System.Diagnostics;
using System.Text.RegularExpressions;

namespace Bench.LocalSystem;

/// <summary>
/// One service started as a real process (<c>dotnet Service.dll</c>) on a loopback port Kestrel picks,
/// with the same environment the AppHost gives it. Its output is kept for diagnostics.
/// </summary>
public sealed partial class ServiceProcess : IAsyncDisposable
{
    private readonly Process _process;
    private readonly TaskCompletionSource<Uri> _listening = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly Queue<string> _output = new();
    private HttpClient? _control;

    private ServiceProcess(string name, Process process)
    {
        Name = name;
        _process = process;
    }

    public string Name { get; }

    public int ProcessId => _process.Id;

    public Uri BaseAddress { get; private set; } = null!;

    /// <summary>Its cleartext HTTP/2 listener (<see cref="SystemContract.Http2Endpoint"/>), where it has one: the address it was given.</summary>
    public Uri? Http2Address { get; private init; }

    /// <summary>For the harness's own calls to the service (health, <c>/runtime</c>): one connection pool, reused.</summary>
    private HttpClient Control => _control ??= new HttpClient { BaseAddress = BaseAddress };

    public bool HasExited => _process.HasExited;

    /// <summary>Raised for each line the service writes to stdout or stderr (its console log), as it arrives.</summary>
    public event Action<string>? Output;

    /// <summary>The last lines the service wrote, for test failure messages.</summary>
    public string RecentOutput
    {
        get
        {
            lock (_output)
            {
                return string.Join(Environment.NewLine, _output);
            }
        }
    }

    /// <summary>
    /// Starts the service and waits until it is healthy. A free port is only free when asked: where the HTTP/2 port was
    /// picked here and another process bound it before the service did (CI run 16: "address already in use", beside the
    /// other lane's systems), it is started again on another, at most three times.
    /// </summary>
    public static async Task<ServiceProcess> StartAsync(string name, string assemblyPath, IReadOnlyDictionary<string, string> environment, CancellationToken cancellationToken, Latency.DelayLine? farSide = null)
    {
        for (var attempt = 1; ; attempt++)
        {
            try
            {
                return await StartOnceAsync(name, assemblyPath, environment, cancellationToken, farSide);
            }
            catch (InvalidOperationException taken) when (attempt < 3 && !environment.ContainsKey(SystemContract.Http2Port)
                && taken.Message.Contains("AddressInUseException", StringComparison.Ordinal))
            {
            }
        }
    }

    private static async Task<ServiceProcess> StartOnceAsync(string name, string assemblyPath, IReadOnlyDictionary<string, string> environment, CancellationToken cancellationToken, Latency.DelayLine? farSide)
    {
        // On the far side of a delay line, through `ip netns exec`, which keeps the process id.
        var start = farSide?.Command("dotnet", assemblyPath) ?? new ProcessStartInfo("dotnet", [assemblyPath]);
        // The content root (appsettings.json) is the output folder, as with `dotnet run`.
        start.WorkingDirectory = Path.GetDirectoryName(assemblyPath)!;
        start.RedirectStandardOutput = true;
        start.RedirectStandardError = true;
        start.UseShellExecute = false;

        start.Environment["ASPNETCORE_URLS"] = "http://127.0.0.1:0";
        start.Environment["DOTNET_NOLOGO"] = "1";
        start.Environment["Logging__Console__FormatterName"] = "simple";
        start.Environment["Logging__LogLevel__Microsoft.Hosting.Lifetime"] = "Information";
        foreach (var (key, value) in environment)
        {
            start.Environment[key] = value;
        }

        var http2 = NameListeners(name, start.Environment);

        var process = Process.Start(start) ?? throw new InvalidOperationException($"Could not start {name}.");
        var service = new ServiceProcess(name, process)
        {
            Http2Address = http2,
        };
        process.OutputDataReceived += (_, e) => service.OnOutput(e.Data);
        process.ErrorDataReceived += (_, e) => service.OnOutput(e.Data);
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();

        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        timeout.CancelAfter(TimeSpan.FromSeconds(60));
        try
        {
            var exited = process.WaitForExitAsync(timeout.Token);
            var first = await Task.WhenAny(service._listening.Task, exited).WaitAsync(timeout.Token);
            if (first != service._listening.Task)
            {
                throw new InvalidOperationException($"{name} exited with code {process.ExitCode} before listening:{Environment.NewLine}{service.RecentOutput}");
            }

            service.BaseAddress = await service._listening.Task;
            await service.WaitHealthyAsync(timeout.Token);
            return service;
        }
        catch
        {
            await service.DisposeAsync();
            throw;
        }
    }

    /// <summary>Graceful stop, as a container runtime or the AppHost does: SIGTERM, then the exit code.</summary>
    public async Task<int> StopAsync(TimeSpan timeout)
    {
        if (!_process.HasExited)
        {
            await SignalAsync("-TERM");
            await SignalAsync("-CONT"); // a frozen process acts on SIGTERM once it runs again

            using var cts = new CancellationTokenSource(timeout);
            try
            {
                await _process.WaitForExitAsync(cts.Token);
            }
            catch (OperationCanceledException)
            {
                _process.Kill(entireProcessTree: true);
                await _process.WaitForExitAsync();
                throw new TimeoutException($"{Name} did not stop within {timeout} of SIGTERM:{Environment.NewLine}{RecentOutput}");
            }
        }

        return _process.ExitCode;
    }

    /// <summary>
    /// Freezes the process (SIGSTOP), as a replica that is stuck (a long GC pause, a deadlock, a paused VM): the kernel
    /// still accepts connections for it and takes the requests, and nothing answers. <see cref="ThawAsync"/> undoes it.
    /// </summary>
    public Task FreezeAsync() => ProcessFaults.FreezeAsync(_process.Id);

    /// <summary>Lets a frozen process run again (SIGCONT).</summary>
    public Task ThawAsync() => ProcessFaults.ThawAsync(_process.Id);

    /// <summary>Leaves the process a tenth of a core (a cgroup's CPU quota; root only) until the task it returns is run.</summary>
    public Task<Func<Task>> StarveAsync() => ProcessFaults.StarveAsync(_process.Id);

    private async Task SignalAsync(string signal)
    {
        using var kill = Process.Start("kill", [signal, _process.Id.ToString(System.Globalization.CultureInfo.InvariantCulture)]);
        await kill.WaitForExitAsync();
    }

    /// <summary>Abrupt end, as a crash: no shutdown code runs.</summary>
    public void Kill()
    {
        if (!_process.HasExited)
        {
            _process.Kill(entireProcessTree: true);
            _process.WaitForExit();
        }
    }

    /// <summary>The service's own runtime counters (<c>GET /runtime</c>): allocations, GCs, CPU time.</summary>
    public async Task<HttpPerf.ServiceDefaults.Telemetry.RuntimeCounters> ReadRuntimeCountersAsync(CancellationToken cancellationToken = default)
    {
        return (await System.Net.Http.Json.HttpClientJsonExtensions.GetFromJsonAsync<HttpPerf.ServiceDefaults.Telemetry.RuntimeCounters>(Control, SystemContract.RuntimePath, cancellationToken))!;
    }

    /// <summary>Current resident set size in bytes (0 once the process has exited).</summary>
    public long WorkingSet()
    {
        if (_process.HasExited)
        {
            return 0;
        }

        _process.Refresh();
        return _process.WorkingSet64;
    }

    public async ValueTask DisposeAsync()
    {
        try
        {
            await StopAsync(TimeSpan.FromSeconds(10));
        }
        catch (TimeoutException)
        {
            // Already killed; disposal must not throw.
        }

        _control?.Dispose();
        _process.Dispose();
    }

    /// <summary>
    /// Catalog.Api, Frontend.Api and Uploads.Api listen twice, as the platform's settings and theirs say
    /// (ServiceDefaults/Http/Http2Listener.cs): HTTP/1.1 at <c>ASPNETCORE_URLS</c> (there Kestrel picks the port), and
    /// cleartext HTTP/2 on the same host at <c>Http2__Port</c>, the one given, else a free one, so the two can be told apart in the log.
    /// </summary>
    private static Uri? NameListeners(string name, IDictionary<string, string?> environment)
    {
        if (name == "Gateway")
        {
            return null;
        }

        if (!environment.TryGetValue(SystemContract.Http2Port, out var port) || port is null)
        {
            port = FreePorts.Next().ToString(System.Globalization.CultureInfo.InvariantCulture);
            environment[SystemContract.Http2Port] = port;
        }

        // On ASPNETCORE_URLS's host; with the ports instead, on every address, loopback among them.
        var urls = environment.TryGetValue("ASPNETCORE_URLS", out var set) && !string.IsNullOrEmpty(set) ? set.Split(';')[0] : "http://127.0.0.1";
        return new UriBuilder(urls) { Port = int.Parse(port, System.Globalization.CultureInfo.InvariantCulture) }.Uri;
    }

    private void OnOutput(string? line)
    {
        if (line is null)
        {
            return;
        }

        lock (_output)
        {
            _output.Enqueue(line);
            if (_output.Count > 200)
            {
                _output.Dequeue();
            }
        }

        Output?.Invoke(line);
        // Kestrel logs each listener; the HTTP/2 one is not the base address.
        if (ListeningLine().Match(line) is { Success: true } match && new Uri(match.Groups[1].Value) is var listening && listening.Port != Http2Address?.Port)
        {
            // A listener on every address (ASPNETCORE_HTTP_PORTS: "http://[::]:8080") is called on loopback.
            _listening.TrySetResult(listening.Host is "[::]" or "0.0.0.0" ? new UriBuilder(listening) { Host = "127.0.0.1" }.Uri : listening);
        }
    }

    private async Task WaitHealthyAsync(CancellationToken cancellationToken)
    {
        while (true)
        {
            try
            {
                using var response = await Control.GetAsync(SystemContract.HealthPath, cancellationToken);
                if (response.IsSuccessStatusCode)
                {
                    return;
                }
            }
            catch (HttpRequestException)
            {
                // Not accepting connections yet.
            }

            await Task.Delay(100, cancellationToken);
        }
    }

    [GeneratedRegex(@"Now listening on: (http://\S+)")]
    private static partial Regex ListeningLine();
}
