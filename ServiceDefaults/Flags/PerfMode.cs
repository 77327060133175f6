using System.Diagnostics;
using Microsoft.AspNetCore.Http;

namespace HttpPerf.ServiceDefaults.Flags;

/// <summary>The two variants every pitfall flag has, and how a request asks for one.</summary>
public static class PerfMode
{
    public const string Naive = "naive";
    public const string Optimized = "optimized";

    /// <summary>Request header (at the Gateway or any service) that forces every hop of one request into a mode.</summary>
    public const string RequestHeader = "X-Perf-Mode";

    /// <summary>Response header listing the <c>flag=variant</c> pairs that served the request, across hops.</summary>
    public const string VariantsHeader = "X-Perf-Variants";

    /// <summary>W3C baggage entry that carries the forced mode downstream.</summary>
    public const string BaggageKey = "perf-mode";

    public static bool IsValid(string? mode) => mode is Naive or Optimized;

    /// <summary>
    /// One word for a <see cref="VariantsHeader"/> value: <c>naive</c> or <c>optimized</c> when every hop
    /// served that variant, <c>mixed</c> when they differ, <c>none</c> when no pitfall served the request.
    /// </summary>
    public static string Summarize(string? variantsHeader)
    {
        var variants = (variantsHeader ?? "").Split(',', StringSplitOptions.TrimEntries | StringSplitOptions.RemoveEmptyEntries)
            .Select(pair => pair[(pair.IndexOf('=') + 1)..])
            .Distinct()
            .ToList();
        return variants switch
        {
            [] => "none",
            [var one] => one,
            _ => "mixed",
        };
    }

    /// <summary>A flag value from the file: anything but a known variant falls back to optimized.</summary>
    public static string OrOptimized(string? variant) => IsValid(variant) ? variant! : Optimized;

    /// <summary>
    /// Drops what a client sent to force a mode, so neither this hop nor any hop behind it sees it: the header
    /// (YARP would forward it), and the baggage entry, from the server span (which the runtime's propagator
    /// injects downstream) and from OpenTelemetry's current baggage (which its HttpClient instrumentation injects).
    /// </summary>
    internal static void Ignore(HttpRequest request, Activity? serverSpan)
    {
        request.Headers.Remove(RequestHeader);
        serverSpan?.SetBaggage(BaggageKey, null);
        OpenTelemetry.Baggage.RemoveBaggage(BaggageKey);
    }

    /// <summary>The mode forced for this request, from its header or from baggage set by an upstream hop.</summary>
    internal static string? Forced(HttpRequest request, out bool invalidHeader)
    {
        invalidHeader = false;
        if (request.Headers.TryGetValue(RequestHeader, out var header))
        {
            var mode = header.ToString().Trim().ToLowerInvariant();
            invalidHeader = !IsValid(mode);
            return invalidHeader ? null : mode;
        }

        var baggage = Activity.Current?.GetBaggageItem(BaggageKey);
        return IsValid(baggage) ? baggage : null;
    }
}
