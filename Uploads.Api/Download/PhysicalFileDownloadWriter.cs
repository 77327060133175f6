using Microsoft.Net.Http.Headers;
using Uploads.Api.Storage;

namespace Uploads.Api.Download;

/// <summary>
/// The fix: the platform's file result. Kestrel sends the file from disk in chunks (sendfile where the
/// transport supports it), sets Content-Length, and answers Range requests with 206 or 416. Its ETag is the file's
/// SHA-256, the same on every replica: a client (or the Gateway, when a replica stops mid-body) asks for the rest with
/// <c>Range</c> and <c>If-Range</c>, and gets it only from the same file.
/// Its page, with the rungs measured side by side: docs/pitfalls/Uploads.Download.md.
/// </summary>
public sealed class PhysicalFileDownloadWriter : IDownloadWriter
{
    public Task<IResult> CreateResultAsync(UploadReceipt upload, string path, CancellationToken cancellationToken) =>
        Task.FromResult<IResult>(TypedResults.PhysicalFile(path, upload.ContentType, entityTag: new EntityTagHeaderValue($"\"{upload.Sha256}\""), enableRangeProcessing: true));
}
