using System.Text.Json;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.ObjectPool;

namespace HttpPerf.ServiceDefaults.Http;

/// <summary>
/// JSON into a chunked response in 256 KB writes. <c>WriteAsJsonAsync</c> serializes into Kestrel's
/// <c>PipeWriter</c>: System.Text.Json flushes that overload every 14.4 KB (90% of four 4 KB pipe segments,
/// whatever <c>DefaultBufferSize</c> says), and Kestrel makes an HTTP chunk of every 4 KB segment it hands out, so a
/// streamed 25 MB body left Catalog.Api as about 5,000 chunks of 4-8 KB. Every hop then pays a read, a write and
/// a system call per chunk, and HttpClient reads a chunked body no faster than its chunks arrive (it reads
/// straight into the caller's buffer only for chunks larger than its own 4 KB buffer). A <see cref="Utf8JsonWriter"/>
/// on the response <c>Stream</c> buffers what it writes and hands it on only when flushed: flushed at 90% of 256 KB,
/// that is one write, one flush and one chunk of about 230 KB each, and the same backpressure at every write.
/// Each piece wakes every hop downstream once, so fewer, larger pieces cost the relaying hops less (the Gateway's
/// relay: docs/pitfalls/Gateway.Buffering.md).
/// The writers come from a pool: a writer keeps its 256 KB buffer (a large-object-heap array) from one response to
/// the next, where a new writer per response would allocate and zero a new one.
/// </summary>
public static class LargeWrites
{
    public const int BufferSize = 256 * 1024;

    private static readonly ObjectPool<Utf8JsonWriter> Writers =
        new DefaultObjectPoolProvider { MaximumRetained = 16 }.Create(new WriterPolicy());

    /// <summary>A JSON writer into the response body: it buffers what it writes until <see cref="FlushIfFullAsync"/> sends it on.</summary>
    public static PooledJsonWriter RentJsonWriter(HttpResponse response)
    {
        response.ContentType = "application/json; charset=utf-8";
        var writer = Writers.Get();
        writer.Reset(response.Body);
        return new PooledJsonWriter(writer);
    }

    /// <summary>Sends what <paramref name="writer"/> holds once it reaches 90% of <see cref="BufferSize"/>, as the serializer does.</summary>
    public static ValueTask FlushIfFullAsync(Utf8JsonWriter writer, CancellationToken cancellationToken) =>
        writer.BytesPending >= BufferSize * 9 / 10 ? new ValueTask(writer.FlushAsync(cancellationToken)) : ValueTask.CompletedTask;

    /// <summary>A rented writer; disposing it returns it to the pool, dropping whatever was not flushed (a failed response).</summary>
    public sealed class PooledJsonWriter(Utf8JsonWriter writer) : IDisposable
    {
        public Utf8JsonWriter Json => writer;

        public void Dispose() => Writers.Return(writer);
    }

    private sealed class WriterPolicy : IPooledObjectPolicy<Utf8JsonWriter>
    {
        public Utf8JsonWriter Create() => new(Stream.Null);

        public bool Return(Utf8JsonWriter writer)
        {
            writer.Reset(Stream.Null); // no reference to the response it wrote
            return true;
        }
    }
}
