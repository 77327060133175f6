namespace Uploads.Api.Storage;

/// <summary>
/// One file of a request, from its first byte to its commit: a folder of its own under <c>.incoming/&lt;instance&gt;/</c>
/// holding the data, then its receipt, and its share of the quota. Committing renames the folder to its id (<see
/// cref="UploadStore"/>); disposing one not committed deletes the folder and gives its quota back. That is the one
/// place a failed upload is cleaned up: its <see cref="UploadBatch"/> disposes it, whichever reader wrote it and
/// wherever it failed, so a failed request leaves nothing.
/// </summary>
public sealed class PendingUpload(string id, string folder, string fileName, string contentType, QuotaReservation reservation) : IAsyncDisposable
{
    private UploadReceipt? _receipt;
    private bool _gone;

    public string Id { get; } = id;

    /// <summary>Where the file's bytes go.</summary>
    public string DataPath { get; } = Path.Combine(folder, UploadStore.DataName);

    /// <summary>Every byte is reserved here before it is written: past the quota or the disk's free space, a 507.</summary>
    public QuotaReservation Reservation { get; } = reservation;

    /// <summary>The receipt, once <see cref="CompleteAsync"/> has written it.</summary>
    public UploadReceipt Receipt => _receipt ?? throw new InvalidOperationException($"Upload {Id} is not complete.");

    internal string Folder { get; } = folder;

    /// <summary>The bytes are on disk and flushed: the receipt is written beside them, and the upload waits for its batch's commit.</summary>
    public async Task CompleteAsync(long size, string sha256, CancellationToken cancellationToken)
    {
        var receipt = new UploadReceipt(Id, size, sha256, fileName, contentType);
        await UploadStore.WriteReceiptAsync(Folder, receipt, cancellationToken);
        _receipt = receipt;
    }

    /// <summary>After the commit's rename: the folder is the store's now, and its bytes count as stored.</summary>
    internal async Task CommittedAsync()
    {
        _gone = true;
        await Reservation.CommitAsync();
    }

    public async ValueTask DisposeAsync()
    {
        if (_gone)
        {
            return;
        }

        _gone = true;
        try
        {
            Directory.Delete(Folder, recursive: true);
        }
        catch (IOException)
        {
            // The refusal or the failure it follows still goes out; the folder is in this replica's incoming
            // folder, which its next start clears (UploadStore.StartAsync).
        }
        finally
        {
            await Reservation.ReleaseAsync();
        }
    }
}
