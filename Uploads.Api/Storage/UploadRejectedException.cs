namespace Uploads.Api.Storage;

/// <summary>Input the service refuses; the handler turns it into a problem response with this status.</summary>
public sealed class UploadRejectedException(int status, string title) : Exception(title)
{
    public int Status { get; } = status;
}
