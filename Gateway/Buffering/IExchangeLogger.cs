using HttpPerf.ServiceDefaults.Contract;


namespace Gateway.Buffering;

/// <summary>
/// Pitfall <c>Gateway.Buffering</c>: the "request/response logging" every gateway grows. It runs in
/// YARP's pipeline around each proxied request; both implementations pass the same bytes through.
/// Its page, with the rungs measured side by side: docs/pitfalls/Gateway.Buffering.md.
/// </summary>
public interface IExchangeLogger
{
    public const string Flag = Pitfalls.GatewayBuffering;

    Task InvokeAsync(HttpContext context, RequestDelegate next);
}
