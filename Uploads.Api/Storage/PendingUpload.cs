namespace Uploads.Api.Storage;

/// <summary>
/// A file fully written, hashed and flushed under <c>.incoming/</c>, not yet acknowledged. Committing
/// moves it under its id; disposing an uncommitted one deletes it, so a failed request leaves nothing.
/// </summary>
public sealed class PendingUpload(UploadReceipt receipt, string dataPath, StorageQuota quota) : IDisposable
{
    public UploadReceipt Receipt { get; } = receipt;

    internal string DataPath { get; } = dataPath;

    internal string MetadataPath => DataPath + ".json";

    internal bool Committed { get; set; }

    public void Dispose()
    {
        if (!Committed)
        {
            File.Delete(DataPath);
            File.Delete(MetadataPath);
            quota.Release(Receipt.Size);
        }
    }
}

/// <summary>The files of one request: committed together, or deleted together.</summary>
public sealed class UploadBatch(UploadStore store) : IDisposable
{
    private readonly List<PendingUpload> _files = [];

    public int Count => _files.Count;

    public void Add(PendingUpload file) => _files.Add(file);

    public IReadOnlyList<UploadReceipt> Commit()
    {
        foreach (var file in _files)
        {
            store.Commit(file);
        }

        return _files.Select(f => f.Receipt).ToList();
    }

    public void Dispose()
    {
        foreach (var file in _files)
        {
            file.Dispose();
        }
    }
}
