using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;

namespace HttpPerf.ServiceDefaults.Hedging;

/// <summary>
/// When a hedge may start, how many there may be, when a replica is left out, and when a body's silence is resumed from: the settings
/// <see cref="HedgeDelay{TOptions}"/>, <see cref="HedgeBudget{TOptions}"/> and the routing read. Frontend.Api's Catalog
/// client (<c>Frontend:Replicas</c>) and the Gateway's routes (<c>Gateway:Hedging</c>) each bind their own, with these
/// defaults. Their page: docs/pitfalls/Frontend.Replicas.md.
/// </summary>
public abstract class HedgeOptions
{
    /// <summary>The least a first attempt waits for headers before a hedge, whatever the learnt p95.</summary>
    public TimeSpan HedgeFloor { get; set; } = TimeSpan.FromMilliseconds(25);

    /// <summary>The most a first attempt waits for headers before a hedge, and the wait before the call has a p95.</summary>
    public TimeSpan HedgeCeiling { get; set; } = TimeSpan.FromMilliseconds(500);

    /// <summary>The hedges each call earns; over a long run, at most this fraction of calls is hedged.</summary>
    public double HedgeBudget { get; set; } = 0.1;

    /// <summary>Attempts in a row that fail, time out or lose a race before a replica is left out.</summary>
    public int EjectAfterStrikes { get; set; } = 3;

    /// <summary>
    /// The least wait for a body's next bytes, after its headers, before its replica counts as silent and the read is
    /// resumed on another (<see cref="BodySilence{TOptions}"/> learns the bound above it).
    /// </summary>
    public TimeSpan SilenceFloor { get; set; } = TimeSpan.FromMilliseconds(300);

    /// <summary>The most a read waits for a body's next bytes before it resumes elsewhere, and the wait before it has learnt.</summary>
    public TimeSpan SilenceCeiling { get; set; } = TimeSpan.FromSeconds(1);

    /// <summary>Resumes one read may make; past them it waits for its replica, as a read that cannot spend a hedge does.</summary>
    public int MaxResumes { get; set; } = 2;
}

/// <summary>The checks every binding of <see cref="HedgeOptions"/> makes when the service starts.</summary>
public static class HedgeOptionsValidation
{
    public static OptionsBuilder<TOptions> ValidateHedging<TOptions>(this OptionsBuilder<TOptions> options, string section)
        where TOptions : HedgeOptions => options
        .Validate(o => o.HedgeFloor > TimeSpan.Zero && o.HedgeFloor <= o.HedgeCeiling, $"{section}:HedgeFloor must be positive and at most {section}:HedgeCeiling.")
        .Validate(o => o.HedgeBudget is >= 0 and <= 1, $"{section}:HedgeBudget is a fraction of calls, from 0 to 1.")
        .Validate(o => o.EjectAfterStrikes >= 1, $"{section}:EjectAfterStrikes must be at least 1.")
        .Validate(o => o.SilenceFloor > TimeSpan.Zero && o.SilenceFloor <= o.SilenceCeiling && o.MaxResumes >= 0, $"{section}:SilenceFloor must be positive and at most {section}:SilenceCeiling, and {section}:MaxResumes not negative.")
        .ValidateOnStart();
}
