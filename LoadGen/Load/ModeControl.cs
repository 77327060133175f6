using HttpPerf.ServiceDefaults.Contract;


namespace LoadGen.Load;

/// <summary>
/// Which modes LoadGen asks for, changeable while it runs (a dashboard command, <c>PUT /mode</c>):
/// <list type="bullet">
/// <item><c>flags</c>: no <c>X-Perf-Mode</c> header, so every hop serves what the flags file says, and a flag
/// flipped in the dashboard shows in the load's own charts;</item>
/// <item><c>both</c> (A/B): naive and optimized alternate by header, both measured under the same conditions;</item>
/// <item><c>naive</c> or <c>optimized</c>: every request forced into that mode.</item>
/// </list>
/// </summary>
public sealed class ModeControl
{
    public const string FollowFlags = "flags";
    public const string Both = "both";

    public static readonly string[] Choices = [FollowFlags, Both, PerfMode.Naive, PerfMode.Optimized];

    private string[] _modes;

    public ModeControl(IReadOnlyList<string> modes) => _modes = Expand(modes);

    /// <summary>The modes requests cycle through: <c>["flags"]</c>, <c>["naive", "optimized"]</c>, or one forced mode.</summary>
    public IReadOnlyList<string> Modes => Volatile.Read(ref _modes);

    /// <summary>The mode as one word: flags, both, naive or optimized.</summary>
    public string Name => Modes switch
    {
        [var one] => one,
        _ => Both,
    };

    public void Set(string mode) => Volatile.Write(ref _modes, Expand([mode]));

    public static bool IsValid(string? mode) => mode is not null && Choices.Contains(mode);

    private static string[] Expand(IReadOnlyList<string> given)
    {
        if (given.FirstOrDefault(m => !IsValid(m)) is { } unknown)
        {
            throw new ArgumentException($"Unknown mode '{unknown}': use {string.Join(", ", Choices)}.");
        }

        var modes = given.SelectMany(m => m == Both ? [PerfMode.Naive, PerfMode.Optimized] : new[] { m }).Distinct().ToArray();
        return modes.Length == 0 ? throw new ArgumentException("No mode given.") : modes;
    }
}
