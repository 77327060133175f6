using HttpPerf.ServiceDefaults.Contract;

namespace Frontend.Api.Replicas;

/// <summary>Frontend.Replicas' optimized rung: when to hedge, how many hedges, when a replica is left out and asked back (section <c>Frontend:Replicas</c>).</summary>
public sealed class ReplicaOptions
{
    public const string Section = SystemContract.FrontendSection + ":Replicas";

    /// <summary>The least a first attempt waits for headers before a hedge, whatever the learnt p95.</summary>
    public TimeSpan HedgeFloor { get; set; } = TimeSpan.FromMilliseconds(25);

    /// <summary>The most a first attempt waits for headers before a hedge, and the wait before the call has a p95.</summary>
    public TimeSpan HedgeCeiling { get; set; } = TimeSpan.FromMilliseconds(500);

    /// <summary>The hedges each call earns; over a long run, at most this fraction of calls is hedged.</summary>
    public double HedgeBudget { get; set; } = 0.1;

    /// <summary>Attempts in a row that fail, time out or lose a race before a replica is left out.</summary>
    public int EjectAfterStrikes { get; set; } = 3;

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
