using System.Globalization;
using HttpPerf.ServiceDefaults.Selection;
using Microsoft.AspNetCore.Diagnostics;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Routing;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;

namespace HttpPerf.ServiceDefaults.Http;

/// <summary>
/// A request that ran out of memory (the GC's heap at its limit, 50% of a container's in container mode, docs/memory.md), or
/// that its replica's <see cref="MemoryBudget"/> refused before the heap filled, is answered 503 with <c>Retry-After</c> and a problem body, not a 500: the replica is not broken, it was asked for
/// more than it holds at once, and a retry (here or on another replica: the standard resilience handler retries a
/// 503) may well succeed. One log line names the route and the rung that served it, the way to find which lesson did
/// it. Once the response has begun, nothing can be said: the connection is cut, as for any failure mid-body.
/// </summary>
internal sealed partial class OutOfMemoryHandler(IProblemDetailsService problems, ILogger<OutOfMemoryHandler> logger) : IExceptionHandler
{
    /// <summary>Seconds a client is asked to wait: long enough for the requests holding the memory to finish.</summary>
    public const int RetryAfterSeconds = 2;

    public async ValueTask<bool> TryHandleAsync(HttpContext context, Exception exception, CancellationToken cancellationToken)
    {
        if (OutOfMemory(exception) is not { } outOfMemory)
        {
            return false;
        }

        var feature = context.Features.Get<IExceptionHandlerFeature>();
        var route = (feature?.Endpoint as RouteEndpoint)?.RoutePattern.RawText ?? feature?.Path ?? context.Request.Path.Value ?? "";
        var rung = context.RequestServices.GetService<RequestVariants>()?.Own is { } own ? $"{own.Flag}={own.Variant}" : "no pitfall";
        var heap = GC.GetGCMemoryInfo();
        LogOutOfMemory(logger, outOfMemory, context.Request.Method, route, rung, heap.HeapSizeBytes >> 20, heap.TotalAvailableMemoryBytes >> 20);

        // Refused by the replica's MemoryBudget before the heap filled, or an allocation the heap refused.
        return await Refusal.WriteAsync(problems, context, exception, "Out of memory", outOfMemory is InsufficientMemoryException refused
            ? $"{refused.Message} Serving {route} ({rung}). Retry after {RetryAfterSeconds} s."
            : $"This replica ran out of memory serving {route} ({rung}). Retry after {RetryAfterSeconds} s.", RetryAfterSeconds);
    }

    private static OutOfMemoryException? OutOfMemory(Exception? exception)
    {
        for (var e = exception; e is not null; e = e.InnerException)
        {
            if (e is OutOfMemoryException outOfMemory)
            {
                return outOfMemory;
            }
        }

        return null;
    }

    [LoggerMessage(Level = LogLevel.Error, Message = "Out of memory: {Method} {Route} served by {Rung} answered 503 (heap {HeapMiB} of {LimitMiB} MiB at the last GC)")]
    private static partial void LogOutOfMemory(ILogger logger, Exception exception, string method, string route, string rung, long heapMiB, long limitMiB);
}
