using HttpPerf.ServiceDefaults.Flags;

namespace Gateway.Buffering;

/// <summary>
/// Pitfall <c>Gateway.Buffering</c>: the "request/response logging" every gateway grows. It runs in
/// YARP's pipeline around each proxied request; both implementations pass the same bytes through.
/// </summary>
public interface IExchangeLogger
{
    public const string Flag = Pitfalls.GatewayBuffering;

    Task InvokeAsync(HttpContext context, RequestDelegate next);
}
