namespace HttpPerf.ServiceDefaults.Flags;

/// <summary>One pitfall: its flag, the service that stages it, and what each variant does.</summary>
public sealed record Pitfall(string Flag, string Service, string Naive, string Optimized);

/// <summary>
/// Every pitfall flag of the system, in one place: the services register their implementations under
/// these names, and the Gateway's admin API, the admin page and the AppHost's dashboard commands list them.
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
        new(GatewayBuffering, "gateway",
            "a logging middleware buffers every request and response body in memory to capture it",
            "YARP streams bodies through; only sizes and timings are logged"),
        new(FrontendCatalogClient, "frontend",
            "the Catalog's response is buffered, read as a string, deserialized into a list, then re-serialized",
            "the Catalog's response is deserialized as an async stream, mapped and written item by item"),
        new(CatalogSerialization, "catalog",
            "the whole list goes through MVC's Newtonsoft.Json formatter, which spools the body to a temp file",
            "System.Text.Json streams rows from the SQLite reader into the response"),
        new(CatalogWriteStrategy, "catalog",
            "the CSV export writes and flushes each row: one tiny send per product",
            "rows are written to the PipeWriter and flushed every 64 KB"),
        new(UploadsReader, "uploads",
            "IFormFile: the form is buffered (memory, then a temp file) before the files are copied to storage",
            "MultipartReader: each file section streams straight to storage, hashed on the way"),
        new(UploadsDownload, "uploads",
            "the whole file is read into a byte array, then written",
            "the platform's file result: chunked from disk, Content-Length, ranges"),
    ];

    public static Pitfall? Find(string flag) => All.FirstOrDefault(p => p.Flag == flag);
}
