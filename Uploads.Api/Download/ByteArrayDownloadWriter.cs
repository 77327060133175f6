using HttpPerf.ServiceDefaults.Http;
using HttpPerf.ServiceDefaults.Selection;
using Uploads.Api.Storage;

namespace Uploads.Api.Download;

/// <summary>
/// What teams ship: <c>File.ReadAllBytesAsync</c>, then return the array. The whole file sits in one
/// large-object-heap array (a 1 GiB file needs 1 GiB of memory per concurrent download), the first byte
/// leaves only after the last one is read, and range requests get the full body. The array is asked of the replica's
/// memory budget first (<see cref="HeldMemory"/>): a file it cannot hold beside the others is refused with a 503, where
/// it would have taken the heap to its limit and the replica with it (docs/memory.md).
/// Its page, with the rungs measured side by side: docs/pitfalls/Uploads.Download.md.
/// </summary>
public sealed class ByteArrayDownloadWriter(RequestVariants variants, HeldMemory memory) : IDownloadWriter
{
    public async Task<IResult> CreateResultAsync(UploadReceipt upload, string path, CancellationToken cancellationToken)
    {
        memory.Grow(upload.Size, "the file read whole");
        byte[] bytes = await File.ReadAllBytesAsync(path, cancellationToken);
        variants.Buffered(inMemory: bytes.Length);
        return TypedResults.Bytes(bytes, upload.ContentType);
    }
}
