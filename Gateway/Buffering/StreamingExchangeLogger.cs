using System.Diagnostics;

namespace Gateway.Buffering;

/// <summary>
/// The fix: let YARP stream (pooled buffers, body bytes forwarded as they arrive) and log what is
/// known without holding the body: method, path, status, declared sizes, duration. Measured (docs/results/bench,
/// 16 concurrent product lists): Gateway peak working set 134 MB (0.10x naive), 66 ms of CPU a request (0.17x).
/// </summary>
public sealed partial class StreamingExchangeLogger(ILogger<StreamingExchangeLogger> logger) : IExchangeLogger
{
    public async Task InvokeAsync(HttpContext context, RequestDelegate next)
    {
        var started = Stopwatch.GetTimestamp();
        await next(context);
        LogExchange(logger, context.Request.Method, context.Request.Path, context.Response.StatusCode,
            context.Request.ContentLength, context.Response.ContentLength, Stopwatch.GetElapsedTime(started).TotalMilliseconds);
    }

    [LoggerMessage(Level = LogLevel.Information, Message = "{Method} {Path} -> {Status}: request {RequestBytes} bytes, response {ResponseBytes} bytes (null: chunked) in {ElapsedMs:F0} ms")]
    private static partial void LogExchange(ILogger logger, string method, string path, int status, long? requestBytes, long? responseBytes, double elapsedMs);
}
