using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;

namespace HttpPerf.ServiceDefaults;

/// <summary>
/// Kestrel's limits for slow clients, set explicitly in every service (configuration section <c>HttpLimits</c>):
/// a client must send its request headers within <see cref="RequestHeadersTimeout"/>, and send its body and read
/// the response at <see cref="MinDataRateBytesPerSecond"/> or more, averaged after <see cref="DataRateGracePeriod"/>;
/// otherwise Kestrel closes the connection, and the request's cleanup (temp files, pending uploads) runs.
/// </summary>
public sealed class HttpLimits
{
    public const string Section = "HttpLimits";

    /// <summary>Time to receive all request headers; Kestrel's own default is 30 s, far longer than a real client needs.</summary>
    public TimeSpan RequestHeadersTimeout { get; set; } = TimeSpan.FromSeconds(10);

    /// <summary>The slowest a body may be sent or a response read (Kestrel's default, made explicit): 240 bytes a second.</summary>
    public double MinDataRateBytesPerSecond { get; set; } = 240;

    /// <summary>How long a body or response may run below the minimum rate before the connection is closed.</summary>
    public TimeSpan DataRateGracePeriod { get; set; } = TimeSpan.FromSeconds(5);

    internal static void AddTo(IHostApplicationBuilder builder)
    {
        var limits = builder.Configuration.GetSection(Section).Get<HttpLimits>() ?? new HttpLimits();
        builder.Services.Configure<KestrelServerOptions>(kestrel =>
        {
            kestrel.Limits.RequestHeadersTimeout = limits.RequestHeadersTimeout;
            kestrel.Limits.MinRequestBodyDataRate = new MinDataRate(limits.MinDataRateBytesPerSecond, limits.DataRateGracePeriod);
            kestrel.Limits.MinResponseDataRate = new MinDataRate(limits.MinDataRateBytesPerSecond, limits.DataRateGracePeriod);
        });
    }
}
