using System.Text.Json;
using System.Text.Json.Nodes;

namespace HttpPerf.ServiceDefaults.Flags;

/// <summary>
/// Reads and writes the shared flags file in Microsoft.FeatureManagement's schema: each pitfall flag is
/// enabled with its variants (<see cref="Pitfall.Variants"/>), and the chosen one as its default. A write
/// goes to a temporary name, then a rename, so a watching service never reads half a file.
/// </summary>
public static class FlagsFile
{
    private static readonly SemaphoreSlim WriteLock = new(1, 1);

    /// <summary>The variant of every known flag: as the file says, or <c>optimized</c> when it says nothing.</summary>
    public static async Task<IReadOnlyDictionary<string, string>> ReadAsync(string path, CancellationToken cancellationToken = default)
    {
        var variants = Pitfalls.All.ToDictionary(p => p.Flag, _ => PerfMode.Optimized);
        if (!File.Exists(path))
        {
            return variants;
        }

        try
        {
            var document = JsonNode.Parse(await File.ReadAllTextAsync(path, cancellationToken));
            foreach (var flag in document?["feature_management"]?["feature_flags"]?.AsArray() ?? [])
            {
                if (flag?["id"]?.GetValue<string>() is { } id && variants.ContainsKey(id))
                {
                    var enabled = flag["enabled"]?.GetValue<bool>() ?? false;
                    var variant = flag["allocation"]?[enabled ? "default_when_enabled" : "default_when_disabled"]?.GetValue<string>();
                    variants[id] = PerfMode.OrOptimized(variant);
                }
            }
        }
        catch (JsonException)
        {
            // A hand-edited file that does not parse: the services fall back to optimized too.
        }

        return variants;
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
        Directory.CreateDirectory(Path.GetDirectoryName(Path.GetFullPath(path))!);
        var temporary = $"{path}.{Guid.NewGuid():N}.tmp";
        await File.WriteAllTextAsync(temporary, document.ToJsonString(new JsonSerializerOptions { WriteIndented = true }), cancellationToken);
        File.Move(temporary, path, overwrite: true);
    }
}
