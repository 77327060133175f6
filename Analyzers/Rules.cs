using Microsoft.CodeAnalysis;

namespace HttpPerf.Analyzers;

/// <summary>
/// The rules' descriptors. Each title names the pitfall, each message the call it found, and each help link the
/// lesson's page, where the rungs are measured side by side. Warning where the shape is almost always wrong on a data
/// path; info where it depends on the deployment (docs/analyzers.md).
/// </summary>
public static class Rules
{
    private const string Category = "HttpPerf.DataPath";

    /// <summary>
    /// Where the pages are: their path in this repository. A copy published elsewhere sets its own address here, so the
    /// IDE's link opens the page.
    /// </summary>
    public const string PagesRoot = "docs/pitfalls/";

    public static readonly DiagnosticDescriptor CatalogClient = Rule(
        RuleIds.CatalogClient, "Frontend.CatalogClient",
        "A response read whole, then deserialized",
        "'{0}' holds the whole response in memory before {1}: read it as a stream ({2})",
        DiagnosticSeverity.Warning,
        "The client's memory grows with the response, and nothing is sent on until the last byte has arrived and been parsed. Read the content as a stream: ReadFromJsonAsync or JsonSerializer.DeserializeAsyncEnumerable over ReadAsStreamAsync, with HttpCompletionOption.ResponseHeadersRead.");

    public static readonly DiagnosticDescriptor Serialization = Rule(
        RuleIds.Serialization, "Catalog.Serialization",
        "A response body serialized whole before it is sent",
        "{0}",
        DiagnosticSeverity.Warning,
        "A large body built whole before its first byte is sent costs memory (or a temp file) per request and delays the client. Serialize into the response as it is written: System.Text.Json's async serializer, an IAsyncEnumerable, or Results.Json.");

    public static readonly DiagnosticDescriptor WriteStrategy = Rule(
        RuleIds.WriteStrategy, "Catalog.WriteStrategy",
        "A response flushed on every pass of a loop",
        "'{0}' inside the loop sends every row as a write of its own: flush once enough bytes wait, and once after the loop",
        DiagnosticSeverity.Warning,
        "Each flush is a system call and a TCP segment of its own (Kestrel disables Nagle), so a row-sized flush multiplies the server's CPU and, over a long link, the time. Let the writer fill its buffer, flush when a threshold is reached, and once at the end. A server-sent event stream that must send each event at once is left alone.");

    public static readonly DiagnosticDescriptor UploadsReader = Rule(
        RuleIds.UploadsReader, "Uploads.Reader",
        "An upload read as a buffered form",
        "{0} buffers every file of the request (in memory, then in a temp file) before the first one is handed over: read the multipart body as it arrives with MultipartReader",
        DiagnosticSeverity.Warning,
        "Reading the form writes each uploaded byte twice (the form's temp file, then its storage), checks the limits only after the whole body has arrived, and holds a request's files until it ends. MultipartReader over the request body streams each section to its storage.");

    public static readonly DiagnosticDescriptor Download = Rule(
        RuleIds.Download, "Uploads.Download",
        "A file read whole into an array to be sent",
        "'{0}' reads the whole file into one array before {1} sends it: return Results.File with the path (or a FileStream)",
        DiagnosticSeverity.Warning,
        "The array is as large as the file, per download in flight, on the large-object heap; the first byte leaves after the last one is read, and range requests get the whole body. A path or stream result sends the file as it is read, with ranges, and on Linux with sendfile.");

    public static readonly DiagnosticDescriptor Buffering = Rule(
        RuleIds.Buffering, "Gateway.Buffering",
        "A middleware that buffers every body",
        "{0} in a middleware holds every request's or response's whole body: log what is known without the body, or count the bytes as they pass",
        DiagnosticSeverity.Warning,
        "A middleware runs on every request, so a body copied into memory (or EnableBuffering's temp file) makes every client wait for the last byte before the first one moves on, and costs the service a body's size per request in flight.");

    public static readonly DiagnosticDescriptor Replicas = Rule(
        RuleIds.Replicas, "Frontend.Replicas",
        "A service-discovered client with the standard resilience handler only",
        "'{0}' over service discovery waits out a stuck replica's whole attempt timeout before it retries another: hedge a replicated dependency's calls that are safe to repeat onto a different replica, client by client",
        DiagnosticSeverity.Info,
        "The standard handler retries only after an attempt has timed out, and service discovery's round robin sends the next call to the same stuck replica again. Where a dependency has replicas and its calls are safe to repeat, AddStandardHedgingHandler (or a hedging pipeline that picks another replica) bounds the tail. Info: a dependency with one replica, or calls that must not be repeated, do not need it.");

    public static readonly DiagnosticDescriptor Grpc = Rule(
        RuleIds.Grpc, "Frontend.Grpc",
        "A gRPC receive limit raised for one large message",
        "MaxReceiveMessageSize set to {0}: a message that needs more than gRPC's 4 MB is built, sent and held whole at both ends before any of it is used: stream it as messages of many items each",
        DiagnosticSeverity.Warning,
        "gRPC limits each received message to 4 MB because a message is buffered whole: the sender builds and serializes all of it, the receiver reads it into one array and parses every object before the call returns. A server stream of messages of a few hundred KB each keeps both ends to one message at a time, and the first items are used while the rest are still being read.");

    public static readonly DiagnosticDescriptor Blocking = Rule(
        RuleIds.Blocking, "Frontend.Blocking",
        "A thread blocked on HTTP I/O",
        "{0}: the thread waits for the network doing nothing, and under load every request of the service queues for a thread: await the async form",
        DiagnosticSeverity.Warning,
        "A thread-pool thread held through a network call (a synchronous wait on an HttpClient, HttpContent or Stream task, a synchronous read of an HTTP body, or synchronous I/O allowed on a server) is not there for the other requests. The pool starts with one thread a core and adds a few a second, so under concurrency every route of the process slows, its health check included, until the pool has grown to the load.");

    private static DiagnosticDescriptor Rule(string id, string lesson, string title, string message, DiagnosticSeverity severity, string description) =>
        new(id, $"{lesson}: {title}", message, Category, severity, isEnabledByDefault: true, description: description,
            helpLinkUri: PagesRoot + lesson + ".md");
}
