using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using HttpPerf.ServiceDefaults.Contract;

namespace HttpPerf.ServiceDefaults.Http;

/// <summary>
/// Where a service listens (docs/configuration.md). HTTP/1.1 where the platform says, as in any ASP.NET Core app:
/// <c>ASPNETCORE_URLS</c>, else <c>ASPNETCORE_HTTP_PORTS</c> (the .NET images set 8080), else http://localhost:5000.
/// Cleartext HTTP/2, which the Gateway relays uploads over (Gateway.Upstream), needs a listener of its own, since
/// Kestrel speaks HTTP/2 without TLS only on an endpoint that speaks nothing else: it is at <see cref="Port"/>
/// (<c>Http2__Port</c>), on the host of the first HTTP/1.1 address (loopback stays loopback, any address stays any).
/// Not as a Kestrel endpoint in configuration: an endpoint there silently replaces every address the platform's
/// settings give. A service without <see cref="Port"/> has no HTTP/2 listener.
/// </summary>
public sealed class Http2Listener
{
    public const string Section = SystemContract.Http2Section;

    /// <summary>The HTTP/2 listener's port: not 0 (it could not be told from an HTTP/1.1 listener's own free port).</summary>
    public int? Port { get; set; }

    internal static void AddTo(IHostApplicationBuilder builder)
    {
        var port = builder.Configuration.GetSection(Section).Get<Http2Listener>()?.Port;
        if (port is null)
        {
            return;
        }

        var http1 = PlatformAddresses(builder.Configuration);
        if (port is <= 0 or > 65_535 || http1.Any(address => BindingAddress.Parse(address).Port == port))
        {
            throw new InvalidOperationException(
                $"{Section}:Port is {port}: the HTTP/2 listener needs a port of its own, not 0 and not one HTTP/1.1 listens on ({string.Join(';', http1)}).");
        }

        // The platform reads the addresses it binds from "urls", which outranks the ports; emptied, the ports warn of nothing.
        builder.Configuration[WebHostDefaults.ServerUrlsKey] = string.Join(';', [.. http1, $"http://{BindingAddress.Parse(http1[0]).Host}:{port}"]);
        builder.Configuration[WebHostDefaults.HttpPortsKey] = "";
        builder.Configuration[WebHostDefaults.HttpsPortsKey] = "";
        builder.Services.AddOptions<KestrelServerOptions>().Configure(kestrel => kestrel.ConfigureEndpointDefaults(listener =>
        {
            if (listener.IPEndPoint?.Port == port)
            {
                listener.Protocols = HttpProtocols.Http2;
            }
        }));
    }

    /// <summary>The addresses ASP.NET Core would bind: <c>urls</c>, else <c>http_ports</c> and <c>https_ports</c> on any address, else its default.</summary>
    private static string[] PlatformAddresses(IConfiguration configuration)
    {
        var urls = configuration[WebHostDefaults.ServerUrlsKey];
        if (!string.IsNullOrEmpty(urls))
        {
            return urls.Split(';', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries);
        }

        static IEnumerable<string> Expand(string? ports, string scheme) =>
            (ports ?? "").Split(';', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries).Select(port => $"{scheme}://*:{port}");

        string[] addresses = [.. Expand(configuration[WebHostDefaults.HttpPortsKey], "http"), .. Expand(configuration[WebHostDefaults.HttpsPortsKey], "https")];
        return addresses.Length > 0 ? addresses : ["http://localhost:5000"];
    }
}
