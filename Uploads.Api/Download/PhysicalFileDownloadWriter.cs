using Uploads.Api.Storage;

namespace Uploads.Api.Download;

/// <summary>
/// The fix: the platform's file result. Kestrel sends the file from disk in chunks (sendfile where the
/// transport supports it), sets Content-Length, and answers Range requests with 206 or 416.
/// Its page, with the rungs measured side by side: docs/pitfalls/Uploads.Download.md.
/// </summary>
public sealed class PhysicalFileDownloadWriter : IDownloadWriter
{
    public Task<IResult> CreateResultAsync(UploadReceipt upload, string path, CancellationToken cancellationToken) =>
        Task.FromResult<IResult>(TypedResults.PhysicalFile(path, upload.ContentType, enableRangeProcessing: true));
}
