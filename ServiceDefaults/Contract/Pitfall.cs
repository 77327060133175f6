
namespace HttpPerf.ServiceDefaults.Contract;

/// <summary>
/// One pitfall: its flag, the service that stages it, and its variants from worst to best. Every pitfall has
/// <c>naive</c> first and <c>optimized</c> last; a lesson whose idiomatic fix is not its limit has a
/// <c>streaming</c> rung between them.
/// </summary>
public sealed record Pitfall(string Flag, string Service, IReadOnlyList<PitfallVariant> Variants)
{
    public Pitfall(string flag, string service, string naive, string optimized)
        : this(flag, service, [new(PerfMode.Naive, naive), new(PerfMode.Optimized, optimized)])
    {
    }

    public Pitfall(string flag, string service, string naive, string streaming, string optimized)
        : this(flag, service, [new(PerfMode.Naive, naive), new(PerfMode.Streaming, streaming), new(PerfMode.Optimized, optimized)])
    {
    }

    public string Naive => Describe(PerfMode.Naive)!;

    public string Optimized => Describe(PerfMode.Optimized)!;

    public bool Has(string? variant) => Variants.Any(v => v.Name == variant);

    /// <summary>What <paramref name="variant"/> does; null when this pitfall has no such rung.</summary>
    public string? Describe(string? variant) => Variants.FirstOrDefault(v => v.Name == variant)?.Does;

    /// <summary>The rung that serves a request for <paramref name="variant"/>: that one, or optimized when this pitfall has no such rung.</summary>
    public string Serving(string variant) => Has(variant) ? variant : PerfMode.Optimized;
}
