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

    internal static void AddTo(IServiceCollection services)
    {
        services.AddOptions<HttpLimits>().BindConfiguration(Section)
            .Validate(l => l.RequestHeadersTimeout > TimeSpan.Zero && l.DataRateGracePeriod > TimeSpan.Zero && l.MinDataRateBytesPerSecond > 0, "HttpLimits: the timeout, the grace period and the minimum data rate must be positive (Kestrel refuses zero).")
            .ValidateOnStart();
        services.AddOptions<KestrelServerOptions>().Configure<IOptions<HttpLimits>>((kestrel, options) =>
        {
            var limits = options.Value;
            kestrel.Limits.RequestHeadersTimeout = limits.RequestHeadersTimeout;
            kestrel.Limits.MinRequestBodyDataRate = new MinDataRate(limits.MinDataRateBytesPerSecond, limits.DataRateGracePeriod);
            kestrel.Limits.MinResponseDataRate = new MinDataRate(limits.MinDataRateBytesPerSecond, limits.DataRateGracePeriod);
            // SCRATCH (h2 flow-control experiment; to be reverted)
            if (System.Environment.GetEnvironmentVariable("SCRATCH_H2_FRAME") is { Length: > 0 } f) kestrel.Limits.Http2.MaxFrameSize = int.Parse(f);
            if (System.Environment.GetEnvironmentVariable("SCRATCH_H2_SWIN") is { Length: > 0 } sw) kestrel.Limits.Http2.InitialStreamWindowSize = int.Parse(sw);
            if (System.Environment.GetEnvironmentVariable("SCRATCH_H2_CWIN") is { Length: > 0 } cw) kestrel.Limits.Http2.InitialConnectionWindowSize = int.Parse(cw);
        });
    }
}
