using HttpPerf.ServiceDefaults.Http;
using HttpPerf.ServiceDefaults.Selection;
using Uploads.Api.Storage;

namespace Uploads.Api.Download;

/// <summary>
/// What teams ship: <c>File.ReadAllBytesAsync</c>, then return the array. The whole file sits in one
/// large-object-heap array, the first byte leaves only after the last one is read, and range requests get the full
/// body. Then it sits there twice: the one write of the whole array is copied into Kestrel's output buffers (pinned
/// blocks of its memory pool) before any of it is sent, so a 64 MiB file holds 128 MiB until the client has read it
/// (a dump after one such download: 70 MiB of pinned blocks beside the array), and the pool keeps the blocks for a
/// while after. Both are asked of the replica's memory budget first (<see cref="HeldMemory"/>): a file it cannot hold
/// beside the others is refused with a 503, where it would have taken the heap to its limit and the replica with it
/// (docs/memory.md).
/// Its page, with the rungs measured side by side: docs/pitfalls/Uploads.Download.md.
/// </summary>
public sealed class ByteArrayDownloadWriter(RequestVariants variants, HeldMemory memory) : IDownloadWriter
{
    public async Task<IResult> CreateResultAsync(UploadReceipt upload, string path, CancellationToken cancellationToken)
    {
        memory.Grow(2 * upload.Size, "the file read whole and copied into Kestrel's output buffers");
        byte[] bytes = await File.ReadAllBytesAsync(path, cancellationToken);
        variants.Buffered(inMemory: bytes.Length);
        return TypedResults.Bytes(bytes, upload.ContentType);
    }
}
