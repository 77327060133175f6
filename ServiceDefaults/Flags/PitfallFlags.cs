namespace HttpPerf.ServiceDefaults.Flags;

/// <summary>The pitfall flags this service has, filled by <see cref="PerfFlagsExtensions.AddPitfall{TService, TNaive, TOptimized}"/>.</summary>
public sealed class PitfallFlags
{
    private readonly List<string> _names = [];

    public IReadOnlyList<string> Names => _names;

    internal void Add(string flag)
    {
        if (!_names.Contains(flag, StringComparer.Ordinal))
        {
            _names.Add(flag);
        }
    }
}
