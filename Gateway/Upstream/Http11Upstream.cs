namespace Gateway.Upstream;

/// <summary>
/// What teams ship: YARP's default. A destination at <c>http://</c> is reached over HTTP/1.1 (the default version
/// policy, <c>RequestVersionOrLower</c>, never tries cleartext HTTP/2), and over HTTP/1.1 HttpClient sends the whole
/// request body before it reads a response. A service that refuses an upload mid-body (too large, wrong type, disk
/// full) and closes leaves YARP with a failed send, which it answers as 502 Bad Gateway (dotnet/yarp#1501); a
/// service that reads and drops the rest first answers only after the whole body has crossed the network.
/// Its page: docs/pitfalls/Gateway.Upstream.md.
/// </summary>
public sealed class Http11Upstream : IUpstreamProtocol
{
    public Task InvokeAsync(HttpContext context, Func<Task> next) => next();
}
