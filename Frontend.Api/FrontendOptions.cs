using HttpPerf.ServiceDefaults.Contract;

namespace Frontend.Api;

public sealed class FrontendOptions
{
    public const string Section = SystemContract.FrontendSection;

    /// <summary>Adds <c>GET /products/baseline</c>, Catalog.Api's in-memory bytes relayed untouched: the benchmark's limit for this hop; off by default.</summary>
    public bool EnableBaseline { get; set; }

    /// <summary>Frontend.Replicas, optimized: the least a first attempt waits for headers before a hedge, whatever the learnt p95.</summary>
    public TimeSpan HedgeFloor { get; set; } = TimeSpan.FromMilliseconds(25);

    /// <summary>Frontend.Replicas, optimized: the most a first attempt waits for headers before a hedge, and the wait before the call has a p95.</summary>
    public TimeSpan HedgeCeiling { get; set; } = TimeSpan.FromSeconds(1);

    /// <summary>Frontend.Replicas, optimized: the hedges each call earns; over a long run, at most this fraction of calls is hedged.</summary>
    public double HedgeBudget { get; set; } = 0.04;

    /// <summary>Frontend.Replicas, optimized: attempts in a row that fail, time out or lose a race before a replica is left out.</summary>
    public int EjectAfterStrikes { get; set; } = 3;

    /// <summary>Frontend.Replicas, optimized: the least a replica stays out (doubled each time it is left out again, at most eight times).</summary>
    public TimeSpan EjectionTime { get; set; } = TimeSpan.FromSeconds(5);

    /// <summary>Frontend.Replicas, optimized: how often a replica that is out is asked <c>/alive</c>, and how long it has to answer.</summary>
    public TimeSpan ProbeInterval { get; set; } = TimeSpan.FromSeconds(1);

    /// <summary>Frontend.Replicas, optimized: one attempt's limit, as the template's (ServiceDefaults).</summary>
    public TimeSpan AttemptTimeout { get; set; } = TimeSpan.FromSeconds(20);

    /// <summary>Frontend.Replicas, optimized: a whole call's limit, every attempt included, as the template's.</summary>
    public TimeSpan TotalTimeout { get; set; } = TimeSpan.FromSeconds(120);
}
