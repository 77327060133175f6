using HttpPerf.ServiceDefaults.Contract;
using Uploads.Api.Storage;

namespace Uploads.Api.Download;

/// <summary>
/// Pitfall <c>Uploads.Download</c>: how a stored file goes back to the client. Same bytes either way.
/// Its page, with the rungs measured side by side: docs/pitfalls/Uploads.Download.md.
/// </summary>
public interface IDownloadWriter
{
    public const string Flag = Pitfalls.UploadsDownload;

    Task<IResult> CreateResultAsync(UploadReceipt upload, string path, CancellationToken cancellationToken);
}
