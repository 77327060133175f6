namespace Uploads.Api.Storage;

/// <summary>The files of one request: committed together, or deleted together.</summary>
public sealed class UploadBatch(UploadStore store) : IAsyncDisposable
{
    private readonly List<PendingUpload> _files = [];

    /// <summary>Files begun so far.</summary>
    public int Count => _files.Count;

    /// <summary>A new file of this request, in a folder of its own: deleted with the batch unless the batch commits.</summary>
    public PendingUpload Begin(string fileName, string contentType)
    {
        var file = store.Begin(fileName, contentType);
        _files.Add(file);
        return file;
    }

    public async Task<IReadOnlyList<UploadReceipt>> CommitAsync()
    {
        foreach (var file in _files)
        {
            await store.CommitAsync(file);
        }

        return _files.Select(f => f.Receipt).ToList();
    }

    /// <summary>Deletes every file not committed; once (a refused request disposes it before it drains the body).</summary>
    public async ValueTask DisposeAsync()
    {
        foreach (var file in _files)
        {
            await file.DisposeAsync();
        }

        _files.Clear();
    }
}
