using System.Diagnostics;
using System.Net;

namespace HttpPerf.Tests.Infrastructure;

/// <summary>
/// A request body sent at a realistic client's pace (<paramref name="bytesPerSecond"/>, in 64 KiB pieces), as a home
/// or office uplink sends it, rather than at loopback speed, where a refusal comes only after the whole body is in.
/// </summary>
public sealed class PacedContent(byte[] body, int bytesPerSecond, string contentType) : HttpContent
{
    private const int Piece = 64 * 1024;

    protected override async Task SerializeToStreamAsync(Stream stream, TransportContext? context) =>
        await SerializeToStreamAsync(stream, context, CancellationToken.None);

    protected override async Task SerializeToStreamAsync(Stream stream, TransportContext? context, CancellationToken cancellationToken)
    {
        var clock = Stopwatch.StartNew();
        for (var sent = 0; sent < body.Length; sent += Piece)
        {
            await stream.WriteAsync(body.AsMemory(sent, Math.Min(Piece, body.Length - sent)), cancellationToken);
            await stream.FlushAsync(cancellationToken);
            var due = TimeSpan.FromSeconds((double)(sent + Piece) / bytesPerSecond) - clock.Elapsed;
            if (due > TimeSpan.Zero)
            {
                await Task.Delay(due, cancellationToken);
            }
        }
    }

    protected override bool TryComputeLength(out long length)
    {
        length = body.Length;
        return true;
    }

    public static PacedContent Multipart(byte[] body, int bytesPerSecond)
    {
        var content = new PacedContent(body, bytesPerSecond, $"multipart/form-data; boundary={Infrastructure.Multipart.Boundary}");
        content.Headers.TryAddWithoutValidation("Content-Type", content.ContentType);
        return content;
    }

    private string ContentType { get; } = contentType;
}
