using Microsoft.AspNetCore.Http.Features;
using Microsoft.Extensions.Options;
using Yarp.ReverseProxy;
using Yarp.ReverseProxy.Forwarder;
using Yarp.ReverseProxy.Model;

namespace Gateway.Upstream;

/// <summary>
/// The fix: a request that carries a body goes to its cluster's HTTP/2 twin (<see cref="IUpstreamProtocol.Http2Cluster"/>,
/// <c>Version 2</c> with <c>RequestVersionExact</c>: cleartext HTTP/2 with prior knowledge). Over HTTP/2 a service that
/// answers before it has read the body ends the stream (Kestrel's RST_STREAM after the response), HttpClient stops
/// sending and hands YARP the answer, and the client reads the service's 413, 415 or 507 the moment it was made.
/// Requests without a body stay on HTTP/1.1: HTTP/2 frames a large response in 16 KB pieces and gives up sendfile,
/// which doubled the Gateway's CPU on the 100 MiB download (the page's table). <see cref="UpstreamOptions.Http2For"/>
/// <c>AllRequests</c> moves every request, for that comparison.
/// One correction to YARP: when an HTTP/2 connection to a service dies while YARP waits for the client's next bytes
/// (a slow client, a killed replica), HttpClient cancels the body's copy and YARP reports it as the client's error,
/// 400. The client did nothing wrong and its request was not served: that is 502, as it is over HTTP/1.1.
/// Its page: docs/pitfalls/Gateway.Upstream.md.
/// </summary>
public sealed class Http2ForRequestBodies(IProxyStateLookup clusters, IOptions<UpstreamOptions> options) : IUpstreamProtocol
{
    public async Task InvokeAsync(HttpContext context, Func<Task> next)
    {
        var hasBody = context.Features.Get<IHttpRequestBodyDetectionFeature>()?.CanHaveBody ?? false;
        if ((hasBody || options.Value.Http2For == Http2Requests.AllRequests)
            && clusters.TryGetCluster(context.GetReverseProxyFeature().Cluster.Config.ClusterId + IUpstreamProtocol.Http2Cluster, out var http2))
        {
            context.ReassignProxyRequest(http2);
        }

        await next();
        if (context.Features.Get<IForwarderErrorFeature>() is { Error: ForwarderError.RequestBodyClient, Exception: AggregateException { InnerExceptions: [OperationCanceledException, ..] } }
            && context.Response.StatusCode == StatusCodes.Status400BadRequest
            && !context.Response.HasStarted
            && !context.RequestAborted.IsCancellationRequested)
        {
            context.Response.StatusCode = StatusCodes.Status502BadGateway;
        }
    }
}
