using System.Globalization;

namespace LoadGen.Load;

/// <summary>
/// What LoadGen sends, one request at a time: the product list through the Gateway, one product's page, the catalog, its CSV
/// export, an upload of a given size, a download, any GET path, or a weighted mix of them ("products=6,upload=1").
/// Request <c>i</c> is the scenario at <c>i / modes</c> in the weighted cycle, in mode <c>i % modes</c>,
/// so every scenario is measured in every mode equally. Results are keyed "scenario/mode"; the modes can
/// change while it runs (<see cref="ModeControl"/>).
/// </summary>
public sealed class Scenario
{
    public static readonly string[] Known = ["products", "product", "catalog", "export", "upload", "download"];

    /// <summary>
    /// Every pitfall sees requests: the two big reads most, uploads and downloads of the given size less; one product's
    /// page (Frontend.Blocking) as often as the list, so that 16 in flight keep several of them waiting on the Catalog at once.
    /// </summary>
    public const string DefaultMix = "products=2,product=2,catalog=2,export=2,upload=1,download=1";

    private readonly string[] _cycle;
    private readonly long _uploadBytes;
    private string? _downloadId;

    private Scenario(string[] cycle, ModeControl modes, long uploadBytes)
    {
        _cycle = cycle;
        Modes = modes;
        _uploadBytes = uploadBytes;
    }

    public ModeControl Modes { get; }

    /// <summary>Parses "products", "/some/path", or "products=6,upload=1,download=1".</summary>
    public static Scenario Parse(string spec, IReadOnlyList<string> modes, long uploadBytes) => Parse(spec, new ModeControl(modes), uploadBytes);

    /// <summary>Parses a scenario whose modes <paramref name="modes"/> can change while it runs.</summary>
    public static Scenario Parse(string spec, ModeControl modes, long uploadBytes)
    {
        var cycle = new List<string>();
        foreach (var part in spec.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries))
        {
            var (name, weight) = part.Split('=') is [var n, var w] ? (n, int.Parse(w, CultureInfo.InvariantCulture)) : (part, 1);
            if (!name.StartsWith('/') && !Known.Contains(name))
            {
                throw new ArgumentException($"Unknown scenario '{name}': use {string.Join(", ", Known)}, a path starting with '/', or a weighted mix like products=6,upload=1.");
            }

            if (weight < 1)
            {
                throw new ArgumentException($"The weight of '{name}' must be at least 1.");
            }

            cycle.AddRange(Enumerable.Repeat(name, weight));
        }

        return cycle.Count == 0 ? throw new ArgumentException("No scenario given.") : new Scenario([.. cycle], modes, uploadBytes);
    }

    /// <summary>Finds the run's one file to download (<paramref name="download"/> stores it the first time), if the mix downloads.</summary>
    public async Task PrepareAsync(DownloadFile download, CancellationToken cancellationToken)
    {
        if (_cycle.Contains("download"))
        {
            _downloadId = await download.IdAsync(cancellationToken);
        }
    }

    public (string Key, HttpRequestMessage Request) Next(long i)
    {
        var modes = Modes.Modes;
        var name = _cycle[i / modes.Count % _cycle.Length];
        var mode = modes[(int)(i % modes.Count)];
        // Each request's span is named for its scenario and route (Exchange), the download's id left out of the name.
        var request = name switch
        {
            "products" => new HttpRequestMessage(HttpMethod.Get, "/api/products").Named(name, "/api/products"),
            // One product's page, cycling over the first 1,000 ids (every catalog size has them).
            "product" => new HttpRequestMessage(HttpMethod.Get, $"/api/products/{1 + (i / modes.Count % 1_000)}").Named(name, "/api/products/{id}"),
            "catalog" => new HttpRequestMessage(HttpMethod.Get, "/api/catalog/products").Named(name, "/api/catalog/products"),
            "export" => new HttpRequestMessage(HttpMethod.Get, "/api/catalog/export").Named(name, "/api/catalog/export"),
            // Each upload is deleted once acknowledged, so hours of load never fill the storage quota.
            "upload" => new HttpRequestMessage(HttpMethod.Post, "/api/uploads") { Content = SyntheticFileContent.Create(_uploadBytes) }.Named(name, "/api/uploads").DeletesWhatItCreates("/api", "/api/uploads/{id}"),
            "download" => new HttpRequestMessage(HttpMethod.Get, $"/api/uploads/{_downloadId ?? throw new InvalidOperationException("Call PrepareAsync first.")}").Named(name, "/api/uploads/{id}"),
            _ => new HttpRequestMessage(HttpMethod.Get, name).Named(null, name),
        };
        if (mode != ModeControl.FollowFlags)
        {
            request.Headers.Add("X-Perf-Mode", mode);
        }

        return ($"{name}/{mode}", request);
    }
}
