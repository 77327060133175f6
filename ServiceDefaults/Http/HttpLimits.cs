using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;
using HttpPerf.ServiceDefaults.Contract;

namespace HttpPerf.ServiceDefaults.Http;

/// <summary>
/// Kestrel's limits for slow clients, set explicitly in every service (configuration section <c>HttpLimits</c>):
/// a client must send its request headers within <see cref="RequestHeadersTimeout"/>, and send its body and read
/// the response at <see cref="MinDataRateBytesPerSecond"/> or more, averaged after <see cref="DataRateGracePeriod"/>;
/// otherwise Kestrel closes the connection, and the request's cleanup (temp files, pending uploads) runs.
/// </summary>
public sealed class HttpLimits
{
    public const string Section = SystemContract.HttpLimitsSection;

    /// <summary>Time to receive all request headers; Kestrel's own default is 30 s, far longer than a real client needs.</summary>
    public TimeSpan RequestHeadersTimeout { get; set; } = TimeSpan.FromSeconds(10);

    /// <summary>The slowest a body may be sent or a response read (Kestrel's default, made explicit): 240 bytes a second.</summary>
    public double MinDataRateBytesPerSecond { get; set; } = 240;

    /// <summary>How long a body or response may run below the minimum rate before the connection is closed.</summary>
    public TimeSpan DataRateGracePeriod { get; set; } = TimeSpan.FromSeconds(5);

    /// <summary>
    /// How much of an HTTP/2 request body a sender may have in flight, per stream and per connection, before this
    /// service has read it (Kestrel's defaults: 768 KiB and 1 MiB). The Gateway relays an upload over HTTP/2
    /// (Gateway.Upstream); with 16 MiB windows it spent about a quarter less CPU per 100 MiB upload, since it stops
    /// to wait for the service's <c>WINDOW_UPDATE</c> far less often (docs/pitfalls/Gateway.Upstream.md). The price is
    /// memory: up to this much of a body waits in a connection's buffers when the service reads slower than it arrives.
    /// Set here, not under <c>Kestrel:Limits</c>: Kestrel reads only its endpoints from configuration.
    /// </summary>
    public int Http2StreamWindowBytes { get; set; } = 16 * 1024 * 1024;

    /// <inheritdoc cref="Http2StreamWindowBytes"/>
    public int Http2ConnectionWindowBytes { get; set; } = 16 * 1024 * 1024;

    internal static void AddTo(IServiceCollection services)
    {
        services.AddOptions<HttpLimits>().BindConfiguration(Section)
            .Validate(l => l.RequestHeadersTimeout > TimeSpan.Zero && l.DataRateGracePeriod > TimeSpan.Zero && l.MinDataRateBytesPerSecond > 0, "HttpLimits: the timeout, the grace period and the minimum data rate must be positive (Kestrel refuses zero).")
            .Validate(l => l.Http2StreamWindowBytes >= 65_535 && l.Http2ConnectionWindowBytes >= l.Http2StreamWindowBytes, "HttpLimits: the HTTP/2 stream window must be at least 65,535 bytes (HTTP/2's own minimum), and the connection window at least the stream window.")
            .ValidateOnStart();
        services.AddOptions<KestrelServerOptions>().Configure<IOptions<HttpLimits>>((kestrel, options) =>
        {
            var limits = options.Value;
            kestrel.Limits.RequestHeadersTimeout = limits.RequestHeadersTimeout;
            kestrel.Limits.MinRequestBodyDataRate = new MinDataRate(limits.MinDataRateBytesPerSecond, limits.DataRateGracePeriod);
            kestrel.Limits.MinResponseDataRate = new MinDataRate(limits.MinDataRateBytesPerSecond, limits.DataRateGracePeriod);
            kestrel.Limits.Http2.InitialStreamWindowSize = limits.Http2StreamWindowBytes;
            kestrel.Limits.Http2.InitialConnectionWindowSize = limits.Http2ConnectionWindowBytes;
        });
    }
}
