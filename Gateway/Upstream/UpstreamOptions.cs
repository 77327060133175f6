namespace Gateway.Upstream;

/// <summary>Which requests the optimized rung of <c>Gateway.Upstream</c> relays over HTTP/2 (configuration section <c>Gateway:Upstream</c>).</summary>
public sealed class UpstreamOptions
{
    public const string Section = "Gateway:Upstream";

    /// <summary><c>RequestsWithBodies</c> (default), or <c>AllRequests</c>: what <c>bench --protocols</c> sets to compare every path.</summary>
    public Http2Requests Http2For { get; set; } = Http2Requests.RequestsWithBodies;
}

public enum Http2Requests
{
    RequestsWithBodies,
    AllRequests,
}
