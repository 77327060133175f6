using HttpPerf.ServiceDefaults.Contract;

namespace HttpPerf.ServiceDefaults.Selection;

/// <summary>The pitfall flags this service has and the variants it registered for each, filled by <see cref="PerfFlagsExtensions.AddPitfall{TService}"/>.</summary>
public sealed class PitfallFlags
{
    private readonly Dictionary<string, List<string>> _variants = new(StringComparer.Ordinal);
    private readonly List<string> _names = [];

    public IReadOnlyList<string> Names => _names;

    /// <summary>The variants registered for <paramref name="flag"/>, in registration order.</summary>
    public IReadOnlyList<string> VariantsOf(string flag) => _variants.TryGetValue(flag, out var variants) ? variants : [];

    /// <summary>The variant that serves a request for <paramref name="variant"/>: that one if registered, else optimized.</summary>
    public string Serving(string flag, string variant) => VariantsOf(flag).Contains(variant) ? variant : PerfMode.Optimized;

    internal void Add(string flag)
    {
        if (!_names.Contains(flag, StringComparer.Ordinal))
        {
            _names.Add(flag);
            _variants[flag] = [];
        }
    }

    internal void AddVariant(string flag, string variant)
    {
        Add(flag);
        if (!PerfMode.IsValid(variant) || _variants[flag].Contains(variant))
        {
            throw new ArgumentException($"'{variant}' is not a new variant of {flag}: use {PerfMode.Choices(PerfMode.All)}, once each.", nameof(variant));
        }

        _variants[flag].Add(variant);
    }

    /// <summary>
    /// At start-up: every flag registered exactly the rungs <see cref="Pitfalls.All"/> lists for it, which the
    /// admin API, the pages and the dashboard commands offer. A mismatch would offer a rung the service cannot serve.
    /// </summary>
    internal void EnsureMatchesCatalogue()
    {
        foreach (var flag in _names)
        {
            var listed = Pitfalls.Find(flag)?.Variants.Select(v => v.Name).Order().ToList() ?? [];
            var registered = _variants[flag].Order().ToList();
            if (!listed.SequenceEqual(registered))
            {
                throw new InvalidOperationException(
                    $"{flag} registers the variants {string.Join(", ", registered)}, but Pitfalls.All lists {string.Join(", ", listed)}.");
            }
        }
    }
}
