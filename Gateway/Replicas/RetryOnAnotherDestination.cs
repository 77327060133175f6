using Yarp.ReverseProxy.Forwarder;
using Yarp.ReverseProxy.Model;

namespace Gateway.Replicas;

/// <summary>
/// A GET or HEAD that failed before any response byte (the replica refused the connection, died before its
/// headers, or stayed silent past the cluster's activity timeout: frozen, or cut off the network) is sent once
/// more, to another healthy destination. Health checks take a dead replica out within about two probe intervals;
/// this covers the requests that reach it before they do, so a killed replica costs only the requests in flight on
/// it, and a frozen one costs them one activity timeout each. Nothing else is retried: a body may have been
/// consumed, a response started.
/// </summary>
internal static class RetryOnAnotherDestination
{
    public static async Task InvokeAsync(HttpContext context, Func<Task> next)
    {
        // Taken before load balancing, which narrows the list to the one destination it picks.
        var proxy = context.GetReverseProxyFeature();
        var candidates = proxy.AvailableDestinations;
        await next();

        if (context.Features.Get<IForwarderErrorFeature>() is not { Error: ForwarderError.Request or ForwarderError.RequestTimedOut }
            || !(HttpMethods.IsGet(context.Request.Method) || HttpMethods.IsHead(context.Request.Method))
            || context.Response.HasStarted
            || proxy.ProxiedDestination is not { } failed
            || candidates.Where(d => d != failed).ToList() is not { Count: > 0 } others)
        {
            return;
        }

        proxy.AvailableDestinations = others;
        context.Features.Set<IForwarderErrorFeature>(null);
        context.Response.StatusCode = StatusCodes.Status200OK;
        await next();
    }
}
