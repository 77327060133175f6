using HttpPerf.ServiceDefaults.Contract;

namespace Gateway.Admin;

/// <summary>A flag as the admin API shows it: what the file says, and what its service serves right now.</summary>
public sealed record FlagState(string Flag, string Service, string Variant, string? Serving, string Naive, string Optimized)
{
    /// <summary>Every rung of the flag, worst to best, with what it does: the page's switches.</summary>
    public IReadOnlyList<PitfallVariant> Variants => Pitfalls.Find(Flag)?.Variants ?? [];
}
