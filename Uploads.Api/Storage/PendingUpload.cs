namespace Uploads.Api.Storage;

/// <summary>
/// An upload fully written, hashed and flushed in its own folder under <c>.incoming/&lt;instance&gt;/</c>, with its
/// receipt, not yet acknowledged. Committing renames the folder to its id; disposing an uncommitted one deletes
/// it and gives its quota back, so a failed request leaves nothing.
/// </summary>
public sealed class PendingUpload(UploadReceipt receipt, string folder, QuotaReservation reservation) : IAsyncDisposable
{
    public UploadReceipt Receipt { get; } = receipt;

    internal string Folder { get; } = folder;

    internal QuotaReservation Reservation { get; } = reservation;

    internal bool Committed { get; set; }

    public async ValueTask DisposeAsync()
    {
        if (!Committed)
        {
            Directory.Delete(Folder, recursive: true);
            await Reservation.ReleaseAsync();
        }
    }
}

/// <summary>The files of one request: committed together, or deleted together.</summary>
public sealed class UploadBatch(UploadStore store) : IAsyncDisposable
{
    private readonly List<PendingUpload> _files = [];

    public int Count => _files.Count;

    public void Add(PendingUpload file) => _files.Add(file);

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
