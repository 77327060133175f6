using System.Net;
using Microsoft.AspNetCore.Diagnostics;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Logging;
using Polly.CircuitBreaker;

namespace HttpPerf.ServiceDefaults.Http;

/// <summary>
/// A request whose dependency refused it for now is refused for now too: 503 with <c>Retry-After</c> and a problem
/// body, not the 502 a failed call gets. Two cases: the dependency answered 503 itself after the resilience handler's
/// retries (a Catalog replica's <see cref="MemoryBudget"/> refusing the naive list, say), or the circuit breaker is
/// open and sends no call at all until its break ends. Both say "try again later", and a client that honours
/// <c>Retry-After</c> does; a 502 says the dependency answered wrongly, which it did not (docs/memory.md, "Under the
/// demo's own load": the Frontend's 502s with every naive flag on). A dependency that could not be reached or timed
/// out stays a 502, as before. Once the response has begun, nothing can be said.
/// </summary>
public sealed partial class DependencyUnavailableHandler(IProblemDetailsService problems, ILogger<DependencyUnavailableHandler> logger) : IExceptionHandler
{
    public async ValueTask<bool> TryHandleAsync(HttpContext context, Exception exception, CancellationToken cancellationToken)
    {
        if (context.Response.HasStarted || Unavailable(exception) is not { } unavailable)
        {
            return false;
        }

        var retryAfter = Math.Max(1, (int)Math.Ceiling(unavailable.RetryAfter.TotalSeconds));
        LogUnavailable(logger, context.Request.Method, context.Request.Path.Value ?? "", unavailable.Why);
        return await Refusal.WriteAsync(problems, context, exception, "Dependency unavailable", $"{unavailable.Why} Retry after {retryAfter} s.", retryAfter);
    }

    private static (string Why, TimeSpan RetryAfter)? Unavailable(Exception? exception)
    {
        for (var e = exception; e is not null; e = e.InnerException)
        {
            switch (e)
            {
                case HttpRequestException { StatusCode: HttpStatusCode.ServiceUnavailable } refused:
                    return ($"A dependency refused for now: {refused.Message}", TimeSpan.FromSeconds(OutOfMemoryHandler.RetryAfterSeconds));
                case BrokenCircuitException open:
                    return ("A dependency's circuit is open: too many of its calls failed, none is sent until the break ends.", open.RetryAfter ?? TimeSpan.FromSeconds(5));
            }
        }

        return null;
    }

    [LoggerMessage(Level = LogLevel.Warning, Message = "Dependency unavailable: {Method} {Path} answered 503 ({Why})")]
    private static partial void LogUnavailable(ILogger logger, string method, string path, string why);
}
