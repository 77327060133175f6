namespace HttpPerf.ServiceDefaults.Flags;

/// <summary>One rung of a pitfall's ladder: its variant name (<see cref="PerfMode"/>) and what it does.</summary>
public sealed record PitfallVariant(string Name, string Does);

/// <summary>
/// One pitfall: its flag, the service that stages it, and its variants from worst to best. Every pitfall has
/// <c>naive</c> first and <c>optimized</c> last; a lesson whose idiomatic fix is not its limit has a
/// <c>streaming</c> rung between them.
/// </summary>
public sealed record Pitfall(string Flag, string Service, IReadOnlyList<PitfallVariant> Variants)
{
    public Pitfall(string flag, string service, string naive, string optimized)
        : this(flag, service, [new(PerfMode.Naive, naive), new(PerfMode.Optimized, optimized)])
    {
    }

    public Pitfall(string flag, string service, string naive, string streaming, string optimized)
        : this(flag, service, [new(PerfMode.Naive, naive), new(PerfMode.Streaming, streaming), new(PerfMode.Optimized, optimized)])
    {
    }

    public string Naive => Describe(PerfMode.Naive)!;

    public string Optimized => Describe(PerfMode.Optimized)!;

    public bool Has(string? variant) => Variants.Any(v => v.Name == variant);

    /// <summary>What <paramref name="variant"/> does; null when this pitfall has no such rung.</summary>
    public string? Describe(string? variant) => Variants.FirstOrDefault(v => v.Name == variant)?.Does;

    /// <summary>The rung that serves a request for <paramref name="variant"/>: that one, or optimized when this pitfall has no such rung.</summary>
    public string Serving(string variant) => Has(variant) ? variant : PerfMode.Optimized;
}

/// <summary>
/// Every pitfall flag of the system, in one place: the services register their implementations under
/// these names, and the Gateway's admin API, the admin page, the landing page, the README's pitfall table
/// and the AppHost's dashboard commands list them.
/// </summary>
public static class Pitfalls
{
    public const string CatalogSerialization = "Catalog.Serialization";
    public const string CatalogWriteStrategy = "Catalog.WriteStrategy";
    public const string FrontendCatalogClient = "Frontend.CatalogClient";
    public const string UploadsReader = "Uploads.Reader";
    public const string UploadsDownload = "Uploads.Download";
    public const string GatewayBuffering = "Gateway.Buffering";

    public static IReadOnlyList<Pitfall> All { get; } =
    [
        new(GatewayBuffering, SystemContract.Gateway,
            "a logging middleware buffers every request and response body in memory to capture it",
            "YARP streams bodies through; only sizes and timings are logged"),
        new(FrontendCatalogClient, SystemContract.Frontend,
            "the Catalog's response is read as a string, deserialized into a list, mapped, then serialized",
            "JsonSerializer.DeserializeAsyncEnumerable reads one product at a time as it arrives; each view is serialized as it is mapped",
            "Utf8JsonReader reads each product in place off the socket and Utf8JsonWriter writes its view field by field: no object per product"),
        new(CatalogSerialization, SystemContract.Catalog,
            "the whole list goes through MVC's Newtonsoft.Json formatter, which spools the body to a temp file",
            "source-generated JsonSerializer.SerializeAsync streams the reader's rows as Product objects into the response",
            "each SQLite row goes column by column, as SQLite's own UTF-8, into a Utf8JsonWriter: no object per product"),
        new(CatalogWriteStrategy, SystemContract.Catalog,
            "the CSV export writes and flushes each row: one tiny send per product",
            "rows are written to the PipeWriter and flushed every 64 KB"),
        new(UploadsReader, SystemContract.Uploads,
            "IFormFile: the form is buffered (memory, then a temp file) before the files are copied to storage",
            "MultipartReader: each file section streams straight to storage, hashed on the way",
            "the delimiter is found in Kestrel's own buffers (PipeReader, vectorized IndexOf); file bytes are copied into aligned 1 MiB blocks, hashed, and written with direct I/O, past the page cache"),
        new(UploadsDownload, SystemContract.Uploads,
            "the whole file is read into a byte array, then written",
            "the platform's file result: chunked from disk, Content-Length, ranges"),
    ];

    public static Pitfall? Find(string flag) => All.FirstOrDefault(p => p.Flag == flag);
}
