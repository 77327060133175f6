using Grpc.Core;
using Microsoft.AspNetCore.Diagnostics;

namespace Frontend.Api.Grpc;

/// <summary>
/// A Catalog gRPC call that ends with an error status, before the product list has begun, becomes the Frontend's
/// problem response: the Catalog unavailable (every replica refused or none answered) 503 with Retry-After, its deadline passed 504,
/// its answer over this client's receive limit (<c>ResourceExhausted</c>) or any other failure 502. Once the list has
/// begun, nothing can be said: the connection is cut, as for any failure mid-body. Its page: docs/pitfalls/Frontend.Grpc.md.
/// </summary>
public sealed class GrpcProblems(IProblemDetailsService problems) : IExceptionHandler
{
    public async ValueTask<bool> TryHandleAsync(HttpContext context, Exception exception, CancellationToken cancellationToken)
    {
        if (exception is not RpcException rpc || context.Response.HasStarted)
        {
            return false;
        }

        var (status, title) = rpc.StatusCode switch
        {
            StatusCode.Unavailable => (StatusCodes.Status503ServiceUnavailable, "Catalog unavailable"),
            StatusCode.DeadlineExceeded => (StatusCodes.Status504GatewayTimeout, "Catalog too slow"),
            StatusCode.ResourceExhausted => (StatusCodes.Status502BadGateway, "Catalog answer too large"),
            _ => (StatusCodes.Status502BadGateway, "Catalog call failed"),
        };
        context.Response.StatusCode = status;
        if (status == StatusCodes.Status503ServiceUnavailable)
        {
            // Refused for now, as every service's 503 is: a client that honours Retry-After waits that long.
            context.Response.Headers.RetryAfter = "2";
        }

        return await problems.TryWriteAsync(new ProblemDetailsContext
        {
            HttpContext = context,
            Exception = exception,
            ProblemDetails =
            {
                Status = status,
                Title = title,
                Detail = $"The Catalog's gRPC call ended {rpc.StatusCode}: {rpc.Status.Detail}",
            },
        });
    }
}
