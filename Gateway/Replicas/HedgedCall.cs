using Yarp.ReverseProxy.Model;

namespace Gateway.Replicas;

/// <summary>
/// One proxied GET or HEAD that has somewhere else to go if it fails before its headers, and if it is slow too on the
/// routes marked for it: the destinations its cluster had available before load
/// balancing narrowed them to one (<see cref="RecordAsync"/>, in YARP's pipeline), handed to the forwarding client's
/// handlers on the outgoing message (<see cref="Attach"/>, a request transform), where
/// <see cref="DestinationRouting"/> sends each attempt to one it has not tried. Its page: docs/pitfalls/Frontend.Replicas.md.
/// </summary>
internal sealed class HedgedCall(IReverseProxyFeature proxy, IReadOnlyList<DestinationState> candidates, bool whenSlow, CancellationToken caller)
{
    private static readonly HttpRequestOptionsKey<HedgedCall> Key = new("gateway.hedged_call");

    private readonly List<DestinationState> _tried = [];
    private string? _relative;
    private int _answered;

    /// <summary>The key its headers' delay is learnt under: the route, a bounded set (a download's path names its file).</summary>
    public string Route { get; } = proxy.Route.Config.RouteId;

    public string Cluster => proxy.Cluster.Config.ClusterId;

    /// <summary>Whether a slow attempt is hedged, not only a failed one sent again.</summary>
    public bool WhenSlow { get; } = whenSlow;

    /// <summary>Whether the route is the Catalog's product list, whose body can be read on after the last whole product (route metadata <c>"Resume": "AfterId"</c>).</summary>
    public bool ResumesAfterId { get; } = proxy.Route.Config.Metadata?.GetValueOrDefault("Resume") == "AfterId";

    /// <summary>Whether the client has gone: then a cancelled attempt says nothing about its destination.</summary>
    public bool CallerLeft => caller.IsCancellationRequested;

    /// <summary>Whether a destination is left for another attempt; else the call is not hedged.</summary>
    public bool HasUntried
    {
        get
        {
            lock (_tried)
            {
                return _tried.Count < candidates.Count;
            }
        }
    }

    /// <summary>The route metadata (appsettings.json) whose value <see cref="Slow"/> hedges a route's slow GET and HEAD requests.</summary>
    public const string RouteMetadata = "Hedge";

    public const string Slow = "WhenSlow";

    /// <summary>
    /// Before load balancing: a GET or HEAD with more than one destination available is a call to send elsewhere if it
    /// fails, and to hedge if slow on a route marked <see cref="RouteMetadata"/> <see cref="Slow"/>. The product lists'
    /// route is not marked: Frontend.Api hedges its own Catalog calls (the lesson, whose naive rung would be hidden), and
    /// a hedged product list would ask the Catalog twice as well.
    /// </summary>
    public static Task RecordAsync(HttpContext context, Func<Task> next)
    {
        var proxy = context.GetReverseProxyFeature();
        if ((HttpMethods.IsGet(context.Request.Method) || HttpMethods.IsHead(context.Request.Method)) && proxy.AvailableDestinations.Count > 1)
        {
            var whenSlow = proxy.Route.Config.Metadata?.GetValueOrDefault(RouteMetadata) == Slow;
            context.Features.Set(new HedgedCall(proxy, proxy.AvailableDestinations, whenSlow, context.RequestAborted));
        }

        return next();
    }

    /// <summary>A request transform: the call goes with the message YARP sends.</summary>
    public static ValueTask Attach(Yarp.ReverseProxy.Transforms.RequestTransformContext context)
    {
        if (context.HttpContext.Features.Get<HedgedCall>() is { } call)
        {
            context.ProxyRequest.Options.Set(Key, call);
        }

        return default;
    }

    public static HedgedCall? Of(HttpRequestMessage request) => request.Options.TryGetValue(Key, out var call) ? call : null;

    /// <summary>
    /// The destination of the next attempt, and its address: the first goes where YARP's balancing sent it; each later
    /// one to the destination, among those not tried, with the fewest requests in flight. Null when none is left.
    /// </summary>
    public (DestinationState Destination, Uri Address, int Number)? Next(Uri requestUri)
    {
        lock (_tried)
        {
            if (_tried.Count == 0 && proxy.ProxiedDestination is { } first)
            {
                // The path and query YARP appended to the destination's address, for the later attempts.
                _relative = requestUri.AbsoluteUri[first.Model.Config.Address.TrimEnd('/').Length..];
                _tried.Add(first);
                return (first, requestUri, 1);
            }

            if (_relative is null || candidates.Where(d => !_tried.Contains(d)).MinBy(d => d.ConcurrentRequestCount) is not { } next)
            {
                return null;
            }

            _tried.Add(next);
            return (next, new Uri(next.Model.Config.Address.TrimEnd('/') + _relative), _tried.Count);
        }
    }

    /// <summary>
    /// A destination other than the one at <paramref name="authority"/> (host:port), the one with the fewest requests in
    /// flight, and the call's address there: where a relay that stopped mid-body reads on (<see cref="ResumingRangeContent"/>).
    /// </summary>
    public (DestinationState Destination, Uri Address)? Elsewhere(string authority)
    {
        lock (_tried)
        {
            return _relative is not null
                && candidates.Where(d => new Uri(d.Model.Config.Address).Authority != authority).MinBy(d => d.ConcurrentRequestCount) is { } other
                ? (other, new Uri(other.Model.Config.Address.TrimEnd('/') + _relative))
                : null;
        }
    }

    /// <summary>
    /// The first attempt that answered (the one the hedging takes): YARP's passive health check then credits its
    /// destination, not the one that stayed silent.
    /// </summary>
    public void Answered(DestinationState destination)
    {
        if (Interlocked.Exchange(ref _answered, 1) == 0)
        {
            proxy.ProxiedDestination = destination;
        }
    }
}
