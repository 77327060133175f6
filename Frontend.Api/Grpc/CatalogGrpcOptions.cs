using HttpPerf.ServiceDefaults.Contract;

namespace Frontend.Api.Grpc;

/// <summary>How Frontend.Api calls the Catalog over gRPC (docs/pitfalls/Frontend.Grpc.md).</summary>
public sealed class CatalogGrpcOptions
{
    public const string Section = $"{SystemContract.FrontendSection}:Grpc";

    /// <summary>The most a stream's message may hold, as the Catalog allows it.</summary>
    public const int MaxBatchSize = 10_000;

    /// <summary>Products per streamed message when the request names none (<c>?batch=</c>).</summary>
    public int BatchSize { get; set; } = 1_000;

    /// <summary>
    /// The naive rung's receive limit, raised from gRPC's 4 MB so the whole list fits in one message, as teams do after
    /// their first ResourceExhausted. The streaming rungs keep the default.
    /// </summary>
    public int UnaryMaxReceiveMessageSize { get; set; } = 64 * 1024 * 1024;

    /// <summary>The HTTP/2 receive window each call starts with; 0 keeps SocketsHttpHandler's 64 KB, which it widens as it measures the connection.</summary>
    public int InitialStreamWindowSize { get; set; }

    /// <summary>The whole call's deadline, stream or not: nothing shorter cuts a stream (the standard resilience handler is taken off these clients).</summary>
    public TimeSpan Deadline { get; set; } = TimeSpan.FromSeconds(60);

    /// <summary>
    /// gRPC's own hedging (gRFC A6): a second attempt, which service discovery sends to the other replica, when the
    /// first has not answered its headers in this long. A stream answers them with its first message; the unary call
    /// only with the whole list.
    /// </summary>
    public TimeSpan StreamHedgingDelay { get; set; } = TimeSpan.FromSeconds(1);

    /// <inheritdoc cref="StreamHedgingDelay"/>
    public TimeSpan UnaryHedgingDelay { get; set; } = TimeSpan.FromSeconds(5);
}
