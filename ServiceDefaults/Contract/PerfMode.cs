namespace HttpPerf.ServiceDefaults.Contract;

/// <summary>
/// The variants a pitfall flag can have, worst to best, and how a request asks for one. Every flag has
/// <c>naive</c> and <c>optimized</c> (the best rung); the two lessons whose idiomatic fix is not their limit
/// also have <c>streaming</c> (<see cref="Pitfall.Variants"/>). A request or a file asking a flag for a rung it
/// does not have is served <c>optimized</c> (<see cref="Pitfall.Serving"/>): <c>X-Perf-Mode: streaming</c> puts
/// those two lessons on their middle rung and leaves every other hop at its best.
/// Plain .NET only: the AppHost compiles this file (and <see cref="Pitfalls"/>) as source.
/// </summary>
public static class PerfMode
{
    public const string Naive = "naive";
    public const string Streaming = "streaming";
    public const string Optimized = "optimized";

    /// <summary>Every variant name, worst to best.</summary>
    public static IReadOnlyList<string> All { get; } = [Naive, Streaming, Optimized];

    /// <summary>Request header (at the Gateway or any service) that forces every hop of one request into a mode.</summary>
    public const string RequestHeader = "X-Perf-Mode";

    /// <summary>Response header listing the <c>flag=variant</c> pairs that served the request, across hops.</summary>
    public const string VariantsHeader = "X-Perf-Variants";

    /// <summary>W3C baggage entry that carries the forced mode downstream.</summary>
    public const string BaggageKey = "perf-mode";

    public static bool IsValid(string? mode) => mode is not null && All.Contains(mode);

    /// <summary>"'naive', 'streaming' or 'optimized'", for problem details.</summary>
    public static string Choices(IEnumerable<string> variants, string quote = "'")
    {
        var quoted = variants.Select(v => $"{quote}{v}{quote}").ToList();
        return quoted.Count < 2 ? string.Concat(quoted) : $"{string.Join(", ", quoted[..^1])} or {quoted[^1]}";
    }

    /// <summary>
    /// One word for a <see cref="VariantsHeader"/> value: a variant's name when every hop served it, <c>mixed</c>
    /// when they differ, <c>none</c> when no pitfall served the request. A hop whose flag has no rung of that name
    /// and served <c>optimized</c> in its place (<see cref="Pitfall.Serving"/>) counts as serving it, so a request
    /// in <c>X-Perf-Mode: streaming</c> reads <c>streaming</c>, not <c>mixed</c>.
    /// </summary>
    public static string Summarize(string? variantsHeader)
    {
        var served = (variantsHeader ?? "").Split(',', StringSplitOptions.TrimEntries | StringSplitOptions.RemoveEmptyEntries)
            .Select(pair => pair.IndexOf('=') is var at and >= 0 ? (Flag: pair[..at], Variant: pair[(at + 1)..]) : (Flag: "", Variant: pair))
            .ToList();
        var variants = served.Select(s => s.Variant).Distinct().ToList();
        return variants switch
        {
            [] => "none",
            [var one] => one,
            _ => variants.FirstOrDefault(v => served.All(s => s.Variant == v || (s.Variant == Optimized && Pitfalls.Find(s.Flag) is { } p && !p.Has(v)))) ?? "mixed",
        };
    }

    /// <summary>A flag value from the file: anything but a known variant name falls back to optimized.</summary>
    public static string OrOptimized(string? variant) => IsValid(variant) ? variant! : Optimized;

    /// <summary>
    /// A stored value of <paramref name="flag"/>: a rung it does not have (a hand-edited <c>streaming</c> on a two-rung
    /// pitfall) reads as optimized, as it serves, so writing the flags back never carries a rung the flag lacks.
    /// </summary>
    public static string OrOptimized(string flag, string? variant) =>
        Pitfalls.Find(flag) is { } pitfall && variant is not null && pitfall.Has(variant) ? variant : Optimized;
}
