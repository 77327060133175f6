using System.Text.Json;
using System.Text.Json.Serialization.Metadata;
using Microsoft.AspNetCore.Http;

namespace HttpPerf.ServiceDefaults.Http;

/// <summary>
/// JSON into a chunked response in 64 KB writes. <c>WriteAsJsonAsync</c> serializes into Kestrel's
/// <c>PipeWriter</c>: System.Text.Json flushes that overload every 14.4 KB (90% of four 4 KB pipe segments,
/// whatever <c>DefaultBufferSize</c> says), and Kestrel makes an HTTP chunk of every 4 KB segment it hands out, so a
/// streamed 25 MB body left Catalog.Api as about 5,000 chunks of 4-8 KB. Every hop then pays a read, a write and
/// a system call per chunk, and HttpClient reads a chunked body no faster than its chunks arrive (it reads
/// straight into the caller's buffer only for chunks larger than its own 4 KB buffer). The <c>Stream</c> overload
/// serializes into a buffer of <c>DefaultBufferSize</c> and writes it out at 90% full: with 64 KB, one write, one
/// flush and one chunk of about 58 KB each, and the same backpressure at every write.
/// </summary>
public static class LargeWrites
{
    public const int BufferSize = 64 * 1024;

    /// <summary>Options whose serializer buffer is <see cref="BufferSize"/>.</summary>
    public static JsonSerializerOptions For(JsonSerializerOptions options) => new(options) { DefaultBufferSize = BufferSize };

    /// <summary>A JSON writer into the response body: it buffers what it writes until <see cref="FlushIfFullAsync"/> sends it on.</summary>
    public static Utf8JsonWriter CreateJsonWriter(HttpResponse response)
    {
        response.ContentType = "application/json; charset=utf-8";
        return new Utf8JsonWriter(response.Body);
    }

    /// <summary>Sends what <paramref name="writer"/> holds once it reaches 90% of <see cref="BufferSize"/>, as the serializer does.</summary>
    public static ValueTask FlushIfFullAsync(Utf8JsonWriter writer, CancellationToken cancellationToken) =>
        writer.BytesPending >= BufferSize * 9 / 10 ? new ValueTask(writer.FlushAsync(cancellationToken)) : ValueTask.CompletedTask;

    public static Task WriteAsJsonAsync<T>(HttpResponse response, T value, JsonTypeInfo<T> typeInfo, CancellationToken cancellationToken)
    {
        response.ContentType = "application/json; charset=utf-8";
        return JsonSerializer.SerializeAsync(response.Body, value, typeInfo, cancellationToken);
    }
}
