using Microsoft.Extensions.Options;

namespace Uploads.Api.Storage;

/// <summary>
/// How much the uploads may store: the bytes stored plus those being written (<c>Uploads:MaxStoredBytes</c>), and
/// the free space the disk must keep (<c>Uploads:MinFreeDiskBytes</c>). An upload reserves what it writes before it
/// writes it (<see cref="QuotaReservation"/>), so concurrent uploads cannot pass the quota together, and the one
/// that would is refused with a 507 at that chunk, before the rest of its body is read; a refused or failed upload
/// gives its reservation back. The count lives in an <see cref="IQuotaLedger"/>: this process's memory, or Redis
/// when replicas share the storage. The stored total is counted from the files on disk at start.
/// </summary>
public sealed class StorageQuota(IOptions<UploadOptions> options, IQuotaLedger ledger)
{
    // The free-space check is a system call: once a MiB written, not every chunk.
    private const long DiskCheckInterval = 1 << 20;

    private readonly UploadOptions _options = options.Value;

    internal Task StartAsync(long storedBytes, string instance, IReadOnlyList<string> goneInstances) =>
        ledger.StartAsync(storedBytes, instance, goneInstances);

    /// <summary>A deleted upload's bytes, no longer stored.</summary>
    internal Task RemoveAsync(long bytes) => ledger.RemoveStoredAsync(bytes);

    /// <summary>A new upload's share of the quota, written into <paramref name="directory"/>.</summary>
    internal QuotaReservation Begin(string directory) => new(this, ledger, directory);

    /// <summary>At least <paramref name="needed"/> bytes more (up to <paramref name="wanted"/>): the bytes reserved, or a 507.</summary>
    internal async ValueTask<long> ReserveAsync(long needed, long wanted)
    {
        var reserved = await ledger.TryReserveAsync(needed, wanted, _options.MaxStoredBytes);
        return reserved > 0 ? reserved : throw Full($"it would pass the storage quota of {_options.MaxStoredBytes} bytes");
    }

    internal void CheckDisk(long bytes, long writtenSoFar, string directory)
    {
        if (writtenSoFar / DiskCheckInterval != (writtenSoFar + bytes) / DiskCheckInterval || writtenSoFar == 0)
        {
            var free = new DriveInfo(directory).AvailableFreeSpace;
            if (free - bytes < _options.MinFreeDiskBytes)
            {
                throw Full($"the disk must keep {_options.MinFreeDiskBytes} bytes free");
            }
        }
    }

    private static UploadRejectedException Full(string why) =>
        new(StatusCodes.Status507InsufficientStorage, $"The upload cannot be stored: {why}.");
}
