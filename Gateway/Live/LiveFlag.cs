using HttpPerf.ServiceDefaults.Contract;

namespace Gateway.Live;

/// <summary>A flag as the landing page shows it: the variant in the flags file, and what each of its rungs does.</summary>
public sealed record LiveFlag(string Flag, string Service, string Variant, string Naive, string Optimized)
{
    /// <summary>What the rung in the flags file does (the page's "What it does now").</summary>
    public string? Does => Pitfalls.Find(Flag)?.Describe(Variant);

    /// <summary>Every rung of the flag, worst to best.</summary>
    public IReadOnlyList<PitfallVariant> Variants => Pitfalls.Find(Flag)?.Variants ?? [];
}
