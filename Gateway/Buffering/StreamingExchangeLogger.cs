using System.Diagnostics;
using HttpPerf.ServiceDefaults.Selection;

namespace Gateway.Buffering;

/// <summary>
/// The fix: let YARP stream (pooled buffers, body bytes forwarded as they arrive) and log what is
/// known without holding the body: method, path, status, the declared request size, the response bytes counted
/// as they passed, duration.
/// Its page, with the rungs measured side by side: docs/pitfalls/Gateway.Buffering.md.
/// </summary>
public sealed partial class StreamingExchangeLogger(ILogger<StreamingExchangeLogger> logger, RequestVariants variants) : IExchangeLogger
{
    public async Task InvokeAsync(HttpContext context, RequestDelegate next)
    {
        var started = Stopwatch.GetTimestamp();
        await next(context);
        // The response bytes are counted as they pass (CountingResponseBody), so a chunked body has a size too.
        LogExchange(logger, context.Request.Method, context.Request.Path, context.Response.StatusCode,
            RequestSize(context.Request), variants.ResponseBytes, Stopwatch.GetElapsedTime(started).TotalMilliseconds);
    }

    /// <summary>The declared request size: what is known without reading the body.</summary>
    private static string RequestSize(HttpRequest request) => request switch
    {
        { ContentLength: { } length } => $"{length} bytes",
        _ when request.Headers.TransferEncoding.Count > 0 => "chunked",
        _ => "no body",
    };

    [LoggerMessage(Level = LogLevel.Information, Message = "{Method} {Path} -> {Status}: request {RequestSize}, response {ResponseBytes} bytes in {ElapsedMs:F0} ms")]
    private static partial void LogExchange(ILogger logger, string method, string path, int status, string requestSize, long responseBytes, double elapsedMs);
}
