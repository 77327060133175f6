using HttpPerf.ServiceDefaults.Selection;
using Uploads.Api.Storage;

namespace Uploads.Api.Download;

/// <summary>
/// What teams ship: <c>File.ReadAllBytesAsync</c>, then return the array. The whole file sits in one
/// large-object-heap array (a 1 GiB file needs 1 GiB of memory per concurrent download), the first byte
/// leaves only after the last one is read, and range requests get the full body.
/// Its page, with the rungs measured side by side: docs/pitfalls/Uploads.Download.md.
/// </summary>
public sealed class ByteArrayDownloadWriter(RequestVariants variants) : IDownloadWriter
{
    public async Task<IResult> CreateResultAsync(UploadReceipt upload, string path, CancellationToken cancellationToken)
    {
        byte[] bytes = await File.ReadAllBytesAsync(path, cancellationToken);
        variants.Buffered(inMemory: bytes.Length);
        return TypedResults.Bytes(bytes, upload.ContentType);
    }
}
