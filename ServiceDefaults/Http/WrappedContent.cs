using System.Net;

namespace HttpPerf.ServiceDefaults.Http;

/// <summary>
/// A response's content read through a stream of one's own (<see cref="Wrap"/>) in its place: its headers copied
/// (Content-Length too, unless the wrapper may change the length), its body read only through the wrapper, the inner
/// content disposed with it. The Gateway's coalescing relay and Frontend.Api's resumed Catalog read are made of it.
/// </summary>
public abstract class WrappedContent : HttpContent
{
    protected WrappedContent(HttpContent inner, bool keepsLength)
    {
        Inner = inner;
        foreach (var header in inner.Headers)
        {
            if (keepsLength || !header.Key.Equals("Content-Length", StringComparison.OrdinalIgnoreCase))
            {
                Headers.TryAddWithoutValidation(header.Key, header.Value);
            }
        }
    }

    protected HttpContent Inner { get; }

    /// <summary>The stream the body is read through, over the inner content's.</summary>
    protected abstract Stream Wrap(Stream body);

    protected override async Task<Stream> CreateContentReadStreamAsync(CancellationToken cancellationToken) =>
        Wrap(await Inner.ReadAsStreamAsync(cancellationToken));

    protected override Task<Stream> CreateContentReadStreamAsync() => CreateContentReadStreamAsync(CancellationToken.None);

    protected override async Task SerializeToStreamAsync(Stream stream, TransportContext? context, CancellationToken cancellationToken)
    {
        await using var body = await CreateContentReadStreamAsync(cancellationToken);
        await body.CopyToAsync(stream, cancellationToken);
    }

    protected override Task SerializeToStreamAsync(Stream stream, TransportContext? context) => SerializeToStreamAsync(stream, context, CancellationToken.None);

    protected override bool TryComputeLength(out long length)
    {
        length = 0;
        return false;
    }

    protected override void Dispose(bool disposing)
    {
        if (disposing)
        {
            Inner.Dispose();
        }

        base.Dispose(disposing);
    }
}
