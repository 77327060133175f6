using HttpPerf.ServiceDefaults.Contract;

namespace Uploads.Api.Storage;

public sealed class UploadOptions
{
    public const string Section = SystemContract.UploadsSection;

    /// <summary>Where files are stored, relative to the content root unless absolute.</summary>
    public string DataDirectory { get; set; } = "App_Data/uploads";

    /// <summary>
    /// This replica's name among those sharing <see cref="DataDirectory"/> (its in-progress folder is
    /// <c>.incoming/&lt;InstanceId&gt;</c>); empty: host name and process id, unique per container and per process.
    /// </summary>
    public string? InstanceId { get; set; }

    /// <summary>Largest single file (default 2 GiB). Larger gets a 413.</summary>
    public long MaxFileBytes { get; set; } = 2L << 30;

    /// <summary>Largest request body on <c>POST /uploads</c> (Kestrel's own default is 30 MB).</summary>
    public long MaxRequestBytes { get; set; } = (2L << 30) + (1 << 20);

    /// <summary>Files in one request. More gets a 400 and nothing is stored.</summary>
    public int MaxFilesPerRequest { get; set; } = 10;

    /// <summary>Content types a file may declare; <c>*/*</c> allows any.</summary>
    public string[] AllowedContentTypes { get; set; } =
    [
        "application/octet-stream", "application/pdf", "application/zip", "application/json",
        "text/plain", "text/csv", "image/png", "image/jpeg", "image/webp", "video/mp4",
    ];

    /// <summary>Bytes all stored files may take together (default 10 GiB). An upload that would pass it gets a 507.</summary>
    public long MaxStoredBytes { get; set; } = 10L << 30;

    /// <summary>Free space the disk must keep (default 1 GiB). An upload that would eat into it gets a 507.</summary>
    public long MinFreeDiskBytes { get; set; } = 1L << 30;

    /// <summary>Adds <c>POST /uploads/sink</c>, which reads and discards the body (<c>?sha256=true</c>: and hashes it): the benchmark's upper bound.</summary>
    public bool EnableSink { get; set; }
}
