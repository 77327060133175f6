using System.Text.Json.Nodes;

namespace HttpPerf.ServiceDefaults.Flags;

/// <summary>
/// Writes the shared flags file in Microsoft.FeatureManagement's schema: each pitfall flag is enabled
/// with the variants <c>naive</c> and <c>optimized</c>, and the chosen one as its default. The file is
/// written to a temporary name and renamed into place, so a watching service never reads half a file.
/// </summary>
public static class FlagsFile
{
    public static async Task WriteAsync(string path, IReadOnlyDictionary<string, string> variants, CancellationToken cancellationToken = default)
    {
        var flags = new JsonArray();
        foreach (var (flag, variant) in variants.OrderBy(v => v.Key, StringComparer.Ordinal))
        {
            if (!PerfMode.IsValid(variant))
            {
                throw new ArgumentException($"'{variant}' is not a variant of {flag}.", nameof(variants));
            }

            flags.Add(new JsonObject
            {
                ["id"] = flag,
                ["enabled"] = true,
                ["variants"] = new JsonArray(new JsonObject { ["name"] = PerfMode.Naive }, new JsonObject { ["name"] = PerfMode.Optimized }),
                ["allocation"] = new JsonObject { ["default_when_enabled"] = variant },
            });
        }

        var document = new JsonObject { ["feature_management"] = new JsonObject { ["feature_flags"] = flags } };
        var temporary = $"{path}.{Guid.NewGuid():N}.tmp";
        await File.WriteAllTextAsync(temporary, document.ToJsonString(new() { WriteIndented = true }), cancellationToken);
        File.Move(temporary, path, overwrite: true);
    }
}
