using HttpPerf.ServiceDefaults.Contract;

namespace HttpPerf.ServiceDefaults;

/// <summary>
/// <c>dotnet Service.dll --health-probe</c>: asks the service running in this container for <c>/health</c> and
/// exits 0 on a 2xx answer (Healthy or Degraded), 1 otherwise. It is what a Compose <c>healthcheck:</c> runs: the
/// SDK's container images carry no curl, and this needs nothing the image does not already have.
/// </summary>
public static class HealthProbe
{
    public const string Argument = SystemContract.HealthProbeArgument;

    /// <summary>When <paramref name="args"/> asks for a probe, probes and ends the process; otherwise returns, to start the service.</summary>
    public static void ExitIfAsked(string[] args)
    {
        if (args is [Argument])
        {
            Environment.Exit(Probe());
        }
    }

    private static int Probe()
    {
        using var client = new HttpClient { Timeout = TimeSpan.FromSeconds(3) };
        try
        {
            using var response = client.GetAsync(new Uri(LocalAddress(), SystemContract.HealthPath)).GetAwaiter().GetResult();
            return response.IsSuccessStatusCode ? 0 : 1;
        }
        catch (Exception error) when (error is HttpRequestException or TaskCanceledException)
        {
            Console.Error.WriteLine($"health probe: {error.Message}");
            return 1;
        }
    }

    /// <summary>
    /// Where this service listens over HTTP/1.1, from the platform's settings, in Kestrel's order:
    /// <c>ASPNETCORE_URLS</c>, else <c>ASPNETCORE_HTTP_PORTS</c> (8080 in the .NET images).
    /// </summary>
    private static Uri LocalAddress()
    {
        var url = Environment.GetEnvironmentVariable("ASPNETCORE_URLS")?.Split(';', StringSplitOptions.RemoveEmptyEntries).FirstOrDefault(u => u.StartsWith("http://", StringComparison.Ordinal));
        if (url is not null)
        {
            return Loopback(url);
        }

        var ports = Environment.GetEnvironmentVariable("ASPNETCORE_HTTP_PORTS") ?? Environment.GetEnvironmentVariable("HTTP_PORTS");
        var port = ports?.Split([';', ','], StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries).FirstOrDefault() ?? "8080";
        return new Uri($"http://127.0.0.1:{port}");
    }

    private static Uri Loopback(string url)
    {
        var any = new UriBuilder(url.Replace("://+", "://localhost", StringComparison.Ordinal).Replace("://*", "://localhost", StringComparison.Ordinal));
        any.Host = "127.0.0.1";
        return any.Uri;
    }
}
