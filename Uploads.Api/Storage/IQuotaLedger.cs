namespace Uploads.Api.Storage;

/// <summary>Where the quota's count lives: stored bytes, and the bytes that uploads in progress have reserved.</summary>
public interface IQuotaLedger
{
    /// <summary>How much one reservation asks for at once, when the quota has room: 0 reserves exactly each chunk.</summary>
    long LeaseBytes { get; }

    /// <summary>At start: the bytes stored on disk now; forget what this instance and the gone ones had reserved.</summary>
    Task StartAsync(long storedBytes, string instance, IReadOnlyList<string> goneInstances);

    /// <summary>
    /// Reserves at least <paramref name="needed"/> bytes and up to <paramref name="wanted"/>, as far as stored + reserved
    /// stays within <paramref name="maxStoredBytes"/>: the bytes reserved, or 0 when not even <paramref name="needed"/> fit.
    /// </summary>
    ValueTask<long> TryReserveAsync(long needed, long wanted, long maxStoredBytes);

    /// <summary>An upload committed: <paramref name="written"/> bytes are stored now, its <paramref name="reserved"/> bytes are no longer reserved.</summary>
    Task CommitAsync(long written, long reserved);

    Task ReleaseAsync(long reserved);

    /// <summary>An upload was deleted: <paramref name="bytes"/> are no longer stored.</summary>
    Task RemoveStoredAsync(long bytes);
}
