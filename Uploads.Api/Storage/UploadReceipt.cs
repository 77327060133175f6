namespace Uploads.Api.Storage;

/// <summary>What the server acknowledges once a file is fully on disk.</summary>
public sealed record UploadReceipt(string Id, long Size, string Sha256, string FileName, string ContentType);
