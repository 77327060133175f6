using HttpPerf.ServiceDefaults.Contract;
using Uploads.Api.Storage;

namespace Uploads.Api.Reader;

/// <summary>
/// Pitfall <c>Uploads.Reader</c>: how the files of a multipart/form-data request reach storage.
/// Both implementations store the same bytes and enforce the same <see cref="UploadRules"/>.
/// Its page, with the rungs measured side by side: docs/pitfalls/Uploads.Reader.md.
/// </summary>
public interface IUploadReader
{
    public const string Flag = Pitfalls.UploadsReader;

    /// <summary>Adds every file of the request to <paramref name="batch"/>, or throws <see cref="UploadRejectedException"/>.</summary>
    Task ReadFilesAsync(HttpRequest request, string boundary, UploadBatch batch, CancellationToken cancellationToken);
}
