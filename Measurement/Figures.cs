using static System.FormattableString;

namespace HttpPerf.Measurement;

/// <summary>
/// How a measured figure is written in a Markdown table, the same in every report and in the A/B answer: "–" where
/// there is no figure, thousands separated from 100 up, fewer decimals the larger the figure.
/// </summary>
public static class Figures
{
    public static string Ratio(double? top, double? bottom) =>
        top is { } t && bottom is { } b && b > 0 ? Invariant($"{t / b:0.00}") : "–";

    public static string Ms(double? value) => value switch
    {
        null => "–",
        >= 100 => Invariant($"{value:N0}"),
        _ => Invariant($"{value:0.0}"),
    };

    public static string Number(double? value) => value switch
    {
        null => "–",
        double v when !double.IsFinite(v) => "–",
        >= 100 => Invariant($"{value:N0}"),
        >= 1 => Invariant($"{value:0.0}"),
        _ => Invariant($"{value:0.00}"),
    };

    public static string Count(double? value) => value is { } v ? Invariant($"{v:N0}") : "–";
}
