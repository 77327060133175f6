using Microsoft.Extensions.Options;

namespace Uploads.Api.Storage;

/// <summary>What both upload readers check, so bad input gets the same answer in either mode.</summary>
public sealed class UploadRules(IOptions<UploadOptions> options)
{
    public UploadOptions Options { get; } = options.Value;

    /// <summary>
    /// Checks one file before any of it is stored and returns its content type. The client's file name is
    /// metadata only, but one that names a path is refused outright.
    /// </summary>
    public string CheckFile(string? fileName, string? contentType, int filesSoFar)
    {
        if (filesSoFar >= Options.MaxFilesPerRequest)
        {
            throw new UploadRejectedException(StatusCodes.Status400BadRequest, $"At most {Options.MaxFilesPerRequest} files per request.");
        }

        if (string.IsNullOrWhiteSpace(fileName))
        {
            throw new UploadRejectedException(StatusCodes.Status400BadRequest, "A file section has no file name.");
        }

        if (fileName is "." or ".." || fileName.IndexOfAny(['/', '\\', ':', '\0']) >= 0 || fileName.Any(char.IsControl) || fileName.Length > 255)
        {
            throw new UploadRejectedException(StatusCodes.Status400BadRequest, "A file name must be a plain name, not a path.");
        }

        var type = string.IsNullOrWhiteSpace(contentType) ? "application/octet-stream" : contentType;
        if (!Options.AllowedContentTypes.Contains("*/*") && !Options.AllowedContentTypes.Contains(type, StringComparer.OrdinalIgnoreCase))
        {
            throw new UploadRejectedException(StatusCodes.Status415UnsupportedMediaType, $"Files of type '{type}' are not accepted.");
        }

        return type;
    }

    public static UploadRejectedException TooLarge(long limit) =>
        new(StatusCodes.Status413PayloadTooLarge, $"A file is larger than {limit} bytes.");

    /// <summary>
    /// A write to storage failed: the service's fault, never the client's. A full disk or an exhausted quota of the file
    /// system (ENOSPC, EDQUOT: .NET gives the errno as the IOException's HResult on Linux) is a 507, like the free-space
    /// check that refuses before writing, for a disk another writer filled in between; any other failure (another I/O
    /// error, a permission the folder lost) is a 500.
    /// </summary>
    public static UploadRejectedException StorageFailed(Exception error) => error is IOException { HResult: ENOSPC or EDQUOT }
        ? new(StatusCodes.Status507InsufficientStorage, "The upload cannot be stored: the disk is full.")
        : new(StatusCodes.Status500InternalServerError, "The upload could not be written to storage.");

    /// <summary>
    /// An I/O error that reached the handler unwrapped. The store's own calls turn theirs into <see cref="StorageFailed"/>
    /// (<see cref="UploadStore.Storage(Task)"/>); one that carries an errno still comes from a file (ASP.NET's form
    /// buffer, in the naive rung's temp folder) and is the service's too. Any other is the multipart reader's: the
    /// client's body ended before its closing boundary, a 400.
    /// </summary>
    public static UploadRejectedException ReadFailed(IOException error) => error.HResult is > 0 and < 4096
        ? StorageFailed(error)
        : new(StatusCodes.Status400BadRequest, "The multipart body ended before its closing boundary.");

    private const int ENOSPC = 28;
    private const int EDQUOT = 122;

    public static UploadRejectedException NoFile() =>
        new(StatusCodes.Status400BadRequest, "No file in the multipart body.");
}
