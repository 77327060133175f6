namespace Bench.Benches;

/// <summary>Where a scenario's requests enter the system.</summary>
public enum Entry
{
    /// <summary>Through the Gateway, as every client does.</summary>
    Gateway,

    /// <summary>Straight to Frontend.Api: what the Gateway adds is the difference from the same scenario through it.</summary>
    Frontend,
}

/// <summary>
/// One thing <c>bench</c> measures: what it sends in naive and optimized (the flags file decides which serves
/// it), what it sends in the baseline (null: no baseline), where it enters, which services it charges, and the
/// client's read buffer. <paramref name="Loaded"/> scenarios are also run at <c>--concurrency</c>;
/// <paramref name="Streaming"/> ones also in the streaming phase (the lessons that have a middle rung).
/// </summary>
public sealed record BenchScenario(
    string Name,
    string Title,
    Entry Entry,
    string[] Services,
    bool Loaded,
    Func<BenchRequests, HttpRequestMessage> Request,
    Func<BenchRequests, HttpRequestMessage>? Baseline,
    int ReadBufferBytes = 64 * 1024,
    bool Streaming = false)
{
    /// <summary>Whether the requests carry a body of the upload size (so throughput counts it).</summary>
    public bool Uploads => Name.StartsWith("upload", StringComparison.Ordinal);

    /// <summary>Whether the requests need a stored file to download.</summary>
    public bool Downloads => Name.StartsWith("download", StringComparison.Ordinal);
}

/// <summary>What a scenario's requests are built from: the upload size, and the id of a stored file to download.</summary>
public sealed record BenchRequests(long UploadBytes, string? DownloadId);

public static class BenchScenarios
{
    private static readonly string[] ProductsPath = ["Gateway", "Frontend.Api", "Catalog.Api"];
    private static readonly string[] CatalogPath = ["Gateway", "Catalog.Api"];
    private static readonly string[] UploadsPath = ["Gateway", "Uploads.Api"];

    public static IReadOnlyList<BenchScenario> All { get; } =
    [
        new("products", "GET /api/products: Gateway → Frontend.Api → Catalog.Api (baseline: Catalog's bytes from memory, relayed unparsed)",
            Entry.Gateway, ProductsPath, Loaded: true, _ => Get("/api/products"), _ => Get("/api/products/baseline"), Streaming: true),
        new("catalog", "GET /api/catalog/products: Gateway → Catalog.Api (baseline: the same bytes from memory)",
            Entry.Gateway, CatalogPath, Loaded: true, _ => Get("/api/catalog/products"), _ => Get("/api/catalog/products/baseline"), Streaming: true),
        new("export", "GET /api/catalog/export: Gateway → Catalog.Api, CSV, one short row per product (Catalog.WriteStrategy)",
            Entry.Gateway, CatalogPath, Loaded: false, _ => Get("/api/catalog/export"), null),
        new("upload", "POST /api/uploads: Gateway → Uploads.Api (baseline: the raw sink, which reads and discards)",
            Entry.Gateway, UploadsPath, Loaded: false, r => Post("/api/uploads", r.UploadBytes), r => Post("/api/uploads/sink", r.UploadBytes), Streaming: true),
        new("upload-sha256", "POST /api/uploads: as `upload`, against the sink that also hashes what it reads (`?sha256=true`): the limit for a rung that must hash",
            Entry.Gateway, UploadsPath, Loaded: false, r => Post("/api/uploads", r.UploadBytes), r => Post("/api/uploads/sink?sha256=true", r.UploadBytes), Streaming: true),
        new("download", "GET /api/uploads/{id}: Gateway → Uploads.Api, read with a 64 KB client buffer",
            Entry.Gateway, UploadsPath, Loaded: false, r => Get($"/api/uploads/{r.DownloadId}"), null),
        new("products-direct", "GET /products straight from Frontend.Api → Catalog.Api: with `products`, what the Gateway adds",
            Entry.Frontend, ["Frontend.Api", "Catalog.Api"], Loaded: false, _ => Get("/products"), _ => Get("/products/baseline")),
        new("download-4k", "GET /api/uploads/{id}: as `download`, read with a 4 KB client buffer (seed 002)",
            Entry.Gateway, UploadsPath, Loaded: false, r => Get($"/api/uploads/{r.DownloadId}"), null, ReadBufferBytes: 4 * 1024),
    ];

    /// <summary>What a plain <c>bench</c> runs: the project's table.</summary>
    public static readonly string[] Default = ["products", "catalog", "export", "upload", "download", "products-direct"];

    /// <summary>The scenarios named in <paramref name="names"/> ("all" for every one), in the catalogue's order.</summary>
    public static IReadOnlyList<BenchScenario> Select(IReadOnlyCollection<string> names)
    {
        if (names.Contains("all"))
        {
            return All;
        }

        var unknown = names.Where(n => All.All(s => s.Name != n)).ToList();
        return unknown.Count > 0
            ? throw new ArgumentException($"Unknown scenario {string.Join(", ", unknown)}: use {string.Join(", ", All.Select(s => s.Name))} or all.")
            : All.Where(s => names.Contains(s.Name)).ToList();
    }

    public static BenchScenario Find(string name) => All.Single(s => s.Name == name);

    private static HttpRequestMessage Get(string path) => new(HttpMethod.Get, path);

    private static HttpRequestMessage Post(string path, long bytes) => new(HttpMethod.Post, path) { Content = SyntheticFileContent.Create(bytes) };
}
