namespace HttpPerf.ServiceDefaults.Contract;

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
    public const string FrontendReplicas = "Frontend.Replicas";
    public const string FrontendGrpc = "Frontend.Grpc";
    public const string FrontendBlocking = "Frontend.Blocking";
    public const string UploadsReader = "Uploads.Reader";
    public const string UploadsDownload = "Uploads.Download";
    public const string GatewayBuffering = "Gateway.Buffering";
    public const string GatewayUpstream = "Gateway.Upstream";

    public static IReadOnlyList<Pitfall> All { get; } =
    [
        new(GatewayBuffering, SystemContract.Gateway,
            "a logging middleware buffers every request and response body in memory to capture it",
            "YARP streams bodies through; only sizes and timings are logged"),
        new(GatewayUpstream, SystemContract.Gateway,
            "every request is relayed over HTTP/1.1, YARP's default: a refusal made while an upload still flows arrives as a 502",
            "a request with a body is relayed over HTTP/2, which delivers a refusal at once; the rest stay on HTTP/1.1, cheaper for large responses"),
        new(FrontendCatalogClient, SystemContract.Frontend,
            "the Catalog's response is read as a string, deserialized into a list, mapped, then serialized",
            "JsonSerializer.DeserializeAsyncEnumerable reads one product at a time as it arrives; each view is serialized as it is mapped",
            "Utf8JsonReader reads each product in place off the socket and Utf8JsonWriter writes its view field by field: no object per product"),
        new(FrontendReplicas, SystemContract.Frontend,
            "the template's client: round robin over the Catalog's replicas; a hung one is left only after a 20 s attempt timeout",
            "the replica with the lowest recent latency; a hedge to another after the call's p95; one that hangs is left out until it answers"),
        new(FrontendGrpc, SystemContract.Frontend,
            "the list over gRPC as one unary message, the client's 4 MB receive limit raised to take it",
            "a server stream of 1,000-product messages, each parsed and its views serialized as it arrives",
            "the same stream, each message read in place and each view written field by field: no object per product"),
        new(FrontendBlocking, SystemContract.Frontend,
            "a sync helper holds a pool thread through the Catalog call: .GetAwaiter().GetResult(), a sync body read",
            "async all the way"),
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
