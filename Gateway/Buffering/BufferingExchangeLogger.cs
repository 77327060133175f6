using System.Diagnostics;
using System.Text;
using HttpPerf.ServiceDefaults.Http;
using HttpPerf.ServiceDefaults.Selection;
using Microsoft.AspNetCore.Http.Features;
using Yarp.ReverseProxy.Model;

namespace Gateway.Buffering;

/// <summary>
/// What teams add to "see what went through": <c>EnableBuffering</c> and read the whole request body,
/// then swap the response body for a MemoryStream, let the proxy fill it, log, and copy it out. Every
/// body now sits in the Gateway whole (requests past 30 KB in a temp file, responses in memory), the
/// client waits for the last byte before it gets the first, and a 25 MB response costs the Gateway
/// 25 MB or more per request in flight. The captured response asks the replica's memory budget before it grows
/// (<see cref="HeldMemoryStream"/>): past it the request is refused with a 503, where it would have taken the heap to
/// its limit and the Gateway with it, and every other route (docs/memory.md).
/// Its page, with the rungs measured side by side: docs/pitfalls/Gateway.Buffering.md.
/// </summary>
public sealed partial class BufferingExchangeLogger(ILogger<BufferingExchangeLogger> logger, RequestVariants variants, HeldMemory memory) : IExchangeLogger
{
    private const int LoggedChars = 256;

    // EnableBuffering's default: the first 30 KB of a request body in memory, the rest in a temp file.
    private const int RequestMemoryThreshold = 30 * 1024;

    public async Task InvokeAsync(HttpContext context, RequestDelegate next)
    {
        var started = Stopwatch.GetTimestamp();
        // YARP applies the route's MaxRequestBodySize after this middleware, so reading the body here would
        // meet Kestrel's 30 MB default first and cut a large upload with a 413. Teams that hit it add this.
        if (context.GetReverseProxyFeature().Route.Config.MaxRequestBodySize is { } limit
            && context.Features.Get<IHttpMaxRequestBodySizeFeature>() is { IsReadOnly: false } bodySize)
        {
            bodySize.MaxRequestBodySize = limit == -1 ? null : limit;
        }

        context.Request.EnableBuffering();
        var (requestBytes, requestStart) = await ReadAllAsync(context.Request.Body, context.RequestAborted);
        context.Request.Body.Position = 0;

        var responseBody = context.Response.Body;
        using var captured = new HeldMemoryStream(memory, "the response captured whole");
        context.Response.Body = captured;
        try
        {
            await next(context);
        }
        finally
        {
            context.Response.Body = responseBody;
        }

        captured.Position = 0;
        var (responseBytes, responseStart) = await ReadAllAsync(captured, context.RequestAborted);
        variants.Buffered(
            inMemory: Math.Min(requestBytes, RequestMemoryThreshold) + captured.Length,
            inTempFile: Math.Max(0, requestBytes - RequestMemoryThreshold));
        LogExchange(logger, context.Request.Method, context.Request.Path, context.Response.StatusCode, requestBytes, requestStart, responseBytes, responseStart, Stopwatch.GetElapsedTime(started).TotalMilliseconds);

        captured.Position = 0;
        await captured.CopyToAsync(responseBody, context.RequestAborted);
    }

    /// <summary>Reads a body to its end, keeping its length and the start of it as text for the log.</summary>
    private static async Task<(long Length, string Start)> ReadAllAsync(Stream body, CancellationToken cancellationToken)
    {
        var buffer = new byte[16 * 1024];
        long length = 0;
        string? start = null;
        int read;
        while ((read = await body.ReadAsync(buffer, cancellationToken)) > 0)
        {
            start ??= Encoding.UTF8.GetString(buffer, 0, Math.Min(read, LoggedChars));
            length += read;
        }

        return (length, start ?? "");
    }

    [LoggerMessage(Level = LogLevel.Information, Message = "{Method} {Path} -> {Status}: request {RequestBytes} bytes \"{RequestStart}\", response {ResponseBytes} bytes \"{ResponseStart}\" in {ElapsedMs:F0} ms")]
    private static partial void LogExchange(ILogger logger, string method, string path, int status, long requestBytes, string requestStart, long responseBytes, string responseStart, double elapsedMs);
}
