using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.ServiceDefaults.Hedging;

namespace Frontend.Api.Replicas;

/// <summary>Frontend.Replicas' optimized rung: when to hedge and how many hedges (<see cref="HedgeOptions"/>), when a replica is left out and asked back (section <c>Frontend:Replicas</c>).</summary>
public sealed class ReplicaOptions : HedgeOptions
{
    public const string Section = SystemContract.FrontendSection + ":Replicas";

    /// <summary>The least a replica stays out (doubled each time it is left out again, at most eight times).</summary>
    public TimeSpan EjectionTime { get; set; } = TimeSpan.FromSeconds(5);

    /// <summary>
    /// How fast a replica's latency is forgotten while nothing new is seen of it: by a factor e in this time. Linkerd's
    /// is 10 s; 2 s tries a replica that lost a race again within about 3 s, so a frozen one is left out (3 strikes)
    /// within about 7 s, in time for its probe to bring it back within a second of its thaw.
    /// </summary>
    public TimeSpan LatencyDecay { get; set; } = TimeSpan.FromSeconds(2);

    /// <summary>How often a replica that is out is asked <c>/alive</c>, and how long it has to answer.</summary>
    public TimeSpan ProbeInterval { get; set; } = TimeSpan.FromSeconds(1);

    /// <summary>One attempt's limit, as the template's (ServiceDefaults).</summary>
    public TimeSpan AttemptTimeout { get; set; } = TimeSpan.FromSeconds(20);

    /// <summary>A whole call's limit, every attempt included, as the template's.</summary>
    public TimeSpan TotalTimeout { get; set; } = TimeSpan.FromSeconds(120);
}
