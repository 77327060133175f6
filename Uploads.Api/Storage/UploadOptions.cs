namespace Uploads.Api.Storage;

public sealed class UploadOptions
{
    public const string Section = "Uploads";

    /// <summary>Where files are stored, relative to the content root unless absolute.</summary>
    public string DataDirectory { get; set; } = "App_Data/uploads";

    /// <summary>Largest request body accepted on <c>POST /uploads</c> (Kestrel's default is 30 MB).</summary>
    public long MaxRequestBytes { get; set; } = 1L << 30;
}
