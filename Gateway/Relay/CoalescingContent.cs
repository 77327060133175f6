using System.Net;
using HttpPerf.ServiceDefaults.Http;

namespace Gateway.Relay;

/// <summary>
/// An upstream response body relayed in as large pieces as have already arrived. YARP copies a body by issuing a
/// zero-byte read, then a read into its 64 KB buffer. On a chunked response, HttpClient answers a zero-byte read by
/// filling its own 4 KB connection buffer, and the next read then returns those 4 KB at most: the Gateway made one
/// system call per 4 KB read and wrote a 4 KB chunk to the client for each, whatever size the upstream's chunks were.
/// Here the body is read through a <see cref="BufferedBodyStream"/> that coalesces: zero-byte reads are answered at
/// once and never passed on, so HttpClient reads a large chunk's data straight into a 64 KB buffer of this stream's;
/// and each piece handed to YARP is everything that has arrived, as long as reads keep completing at once, up to 64 KB,
/// never waiting for more while holding some. The cost is one copy of the body, and 64 KB per relayed response while
/// it lasts. A body that is read through such a stream already (the catalog read on from another destination) is not
/// wrapped again. Its page: docs/pitfalls/Gateway.Buffering.md.
/// </summary>
public sealed class CoalescingContent(HttpContent inner) : WrappedContent(inner, keepsLength: true)
{
    /// <summary>A coalescing wrapper of <paramref name="inner"/>, with its headers.</summary>
    public static CoalescingContent Wrap(HttpContent inner) => new(inner);

    protected override Stream Wrap(Stream body) => new BufferedBodyStream(body, coalesces: true);

    // Copied whole, not in pieces: nothing here reads it piece by piece.
    protected override Task SerializeToStreamAsync(Stream stream, TransportContext? context) => Inner.CopyToAsync(stream, context);
}
