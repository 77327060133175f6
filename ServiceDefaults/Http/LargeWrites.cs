using System.Text.Json;
using Microsoft.AspNetCore.Http;

namespace HttpPerf.ServiceDefaults.Http;

/// <summary>
/// JSON into a chunked response in 64 KB writes. <c>WriteAsJsonAsync</c> serializes into Kestrel's
/// <c>PipeWriter</c>: System.Text.Json flushes that overload every 14.4 KB (90% of four 4 KB pipe segments,
/// whatever <c>DefaultBufferSize</c> says), and Kestrel makes an HTTP chunk of every 4 KB segment it hands out, so a
/// streamed 25 MB body left Catalog.Api as about 5,000 chunks of 4-8 KB. Every hop then pays a read, a write and
/// a system call per chunk, and HttpClient reads a chunked body no faster than its chunks arrive (it reads
/// straight into the caller's buffer only for chunks larger than its own 4 KB buffer). A <see cref="Utf8JsonWriter"/>
/// on the response <c>Stream</c> buffers what it writes and hands it on only when flushed: flushed at 90% of 64 KB,
/// that is one write, one flush and one chunk of about 58 KB each, and the same backpressure at every write.
/// </summary>
public static class LargeWrites
{
    public const int BufferSize = 64 * 1024;

    /// <summary>A JSON writer into the response body: it buffers what it writes until <see cref="FlushIfFullAsync"/> sends it on.</summary>
    public static Utf8JsonWriter CreateJsonWriter(HttpResponse response)
    {
        response.ContentType = "application/json; charset=utf-8";
        return new Utf8JsonWriter(response.Body);
    }

    /// <summary>Sends what <paramref name="writer"/> holds once it reaches 90% of <see cref="BufferSize"/>, as the serializer does.</summary>
    public static ValueTask FlushIfFullAsync(Utf8JsonWriter writer, CancellationToken cancellationToken) =>
        writer.BytesPending >= BufferSize * 9 / 10 ? new ValueTask(writer.FlushAsync(cancellationToken)) : ValueTask.CompletedTask;
}
