using System.Text.Json.Nodes;
using System.Text.Json;
using HttpPerf.ServiceDefaults.Contract;

namespace HttpPerf.ServiceDefaults.FlagSources;

/// <summary>
/// The flags document in Microsoft.FeatureManagement's schema (each pitfall flag enabled with its variants,
/// <see cref="Pitfall.Variants"/>, and the chosen one as its default), and the shared flags file that holds
/// it. A write goes to a temporary name, then a rename, so a watching service never reads half a file. The
/// Redis store (<see cref="RedisFlagStore"/>) keeps one variant per flag and serves this same document.
/// </summary>
public static class FlagsFile
{
    private static readonly SemaphoreSlim WriteLock = new(1, 1);

    /// <summary>Every known flag at <c>optimized</c>: what a service serves with no flags set.</summary>
    public static Dictionary<string, string> Defaults() => Pitfalls.All.ToDictionary(p => p.Flag, _ => PerfMode.Optimized);

    /// <summary>
    /// The variant of every known flag: as the file says, or <c>optimized</c> when it says nothing. A file that
    /// does not parse is no answer: <see cref="FlagStoreUnavailableException"/>, never "all optimized", so an
    /// admin write after a bad hand edit cannot overwrite every other flag.
    /// </summary>
    public static async Task<IReadOnlyDictionary<string, string>> ReadAsync(string path, CancellationToken cancellationToken = default)
    {
        if (!File.Exists(path))
        {
            return Defaults();
        }

        var text = await File.ReadAllTextAsync(path, cancellationToken);
        try
        {
            return Parse(text);
        }
        catch (Exception error) when (error is JsonException or InvalidOperationException)
        {
            throw new FlagStoreUnavailableException($"The flags file {path} does not parse: {error.Message}", error);
        }
    }

    /// <summary>The variants a flags document sets; throws <see cref="JsonException"/> when it does not parse.</summary>
    public static Dictionary<string, string> Parse(string json)
    {
        var variants = Defaults();
        var document = JsonNode.Parse(json);
        foreach (var flag in document?["feature_management"]?["feature_flags"]?.AsArray() ?? [])
        {
            if (flag?["id"]?.GetValue<string>() is { } id && variants.ContainsKey(id))
            {
                var enabled = flag["enabled"]?.GetValue<bool>() ?? false;
                var variant = flag["allocation"]?[enabled ? "default_when_enabled" : "default_when_disabled"]?.GetValue<string>();
                variants[id] = PerfMode.OrOptimized(id, variant);
            }
        }

        return variants;
    }

    /// <summary>The flags document for exactly these variants.</summary>
    public static string ToJson(IReadOnlyDictionary<string, string> variants)
    {
        var flags = new JsonArray();
        foreach (var (flag, variant) in variants.OrderBy(v => v.Key, StringComparer.Ordinal))
        {
            var rungs = Pitfalls.Find(flag)?.Variants.Select(v => v.Name).ToList() ?? [PerfMode.Naive, PerfMode.Optimized];
            if (!rungs.Contains(variant))
            {
                throw new ArgumentException($"'{variant}' is not a variant of {flag}.", nameof(variants));
            }

            flags.Add(new JsonObject
            {
                ["id"] = flag,
                ["enabled"] = true,
                ["variants"] = new JsonArray([.. rungs.Select(name => new JsonObject { ["name"] = name })]),
                ["allocation"] = new JsonObject { ["default_when_enabled"] = variant },
            });
        }

        var document = new JsonObject { ["feature_management"] = new JsonObject { ["feature_flags"] = flags } };
        return document.ToJsonString(new JsonSerializerOptions { WriteIndented = true });
    }

    /// <summary>Sets some flags, keeping the others as they are.</summary>
    public static async Task SetAsync(string path, IReadOnlyDictionary<string, string> changes, CancellationToken cancellationToken = default)
    {
        await WriteLock.WaitAsync(cancellationToken);
        try
        {
            var variants = new Dictionary<string, string>(await ReadAsync(path, cancellationToken));
            foreach (var (flag, variant) in changes)
            {
                variants[flag] = variant;
            }

            await WriteAsync(path, variants, cancellationToken);
        }
        finally
        {
            WriteLock.Release();
        }
    }

    /// <summary>Replaces the file with exactly these flags.</summary>
    public static async Task WriteAsync(string path, IReadOnlyDictionary<string, string> variants, CancellationToken cancellationToken = default)
    {
        var json = ToJson(variants);
        Directory.CreateDirectory(Path.GetDirectoryName(Path.GetFullPath(path))!);
        var temporary = $"{path}.{Guid.NewGuid():N}.tmp";
        await File.WriteAllTextAsync(temporary, json, cancellationToken);
        File.Move(temporary, path, overwrite: true);
    }
}
