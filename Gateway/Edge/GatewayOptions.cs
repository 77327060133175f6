using HttpPerf.ServiceDefaults.Contract;

namespace Gateway.Edge;

/// <summary>The Gateway at the edge (configuration section <c>Gateway</c>): who may force a mode, and how much it proxies at once.</summary>
public sealed class GatewayOptions
{
    public const string Section = SystemContract.GatewaySection;

    /// <summary>Whether any client may force a mode by header or baggage (<see cref="EdgeModeGate"/>); off by default.</summary>
    public bool AllowModeOverride { get; set; }

    /// <summary>Proxied requests served at once (<see cref="ProxyConcurrency"/>).</summary>
    public int MaxConcurrentRequests { get; set; } = 32;

    /// <summary>Proxied requests that wait for a slot; past them, a 429.</summary>
    public int MaxQueuedRequests { get; set; } = 64;

    /// <summary>How often every cluster's active health probe runs, where set (<see cref="ProbeInterval"/>); unset, each cluster's own.</summary>
    public TimeSpan? ProbeInterval { get; set; }
}
