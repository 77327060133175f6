using System.Globalization;
using Microsoft.AspNetCore.Http;

namespace HttpPerf.ServiceDefaults.Http;

/// <summary>How the exception handlers answer "not now": <see cref="OutOfMemoryHandler"/> and <see cref="DependencyUnavailableHandler"/>.</summary>
internal static class Refusal
{
    /// <summary>
    /// A refusal, as every one of this system's is answered: 503, <c>Retry-After</c> in whole seconds, and a problem
    /// body with <paramref name="title"/> and <paramref name="detail"/>.
    /// </summary>
    public static ValueTask<bool> WriteAsync(IProblemDetailsService problems, HttpContext context, Exception exception, string title, string detail, int retryAfterSeconds)
    {
        context.Response.StatusCode = StatusCodes.Status503ServiceUnavailable;
        context.Response.Headers.RetryAfter = retryAfterSeconds.ToString(CultureInfo.InvariantCulture);
        return problems.TryWriteAsync(new ProblemDetailsContext
        {
            HttpContext = context,
            Exception = exception,
            ProblemDetails = { Status = StatusCodes.Status503ServiceUnavailable, Title = title, Detail = detail },
        });
    }
}
