using Microsoft.Extensions.Options;

namespace Uploads.Api.Storage;

/// <summary>
/// How much one service may store: the bytes stored plus those being written (<c>Uploads:MaxStoredBytes</c>), and
/// the free space the disk must keep (<c>Uploads:MinFreeDiskBytes</c>). Every chunk an upload writes is reserved
/// first, so concurrent uploads cannot pass the quota together, and the one that would is refused with a 507 at
/// that chunk, before the rest of its body is read; a refused or failed upload gives its reservation back. The
/// stored total is counted from the files on disk at start, so it survives a restart.
/// </summary>
public sealed class StorageQuota(IOptions<UploadOptions> options)
{
    // The free-space check is a system call: once a MiB written, not every chunk.
    private const long DiskCheckInterval = 1 << 20;

    private readonly UploadOptions _options = options.Value;
    private long _used;

    public long Used => Interlocked.Read(ref _used);

    internal void Start(long storedBytes) => Interlocked.Exchange(ref _used, storedBytes);

    /// <summary>Reserves <paramref name="bytes"/> more for an upload that has written <paramref name="writtenSoFar"/> to <paramref name="directory"/>.</summary>
    internal void Reserve(long bytes, long writtenSoFar, string directory)
    {
        if (Interlocked.Add(ref _used, bytes) > _options.MaxStoredBytes)
        {
            Interlocked.Add(ref _used, -bytes);
            throw Full($"it would pass the storage quota of {_options.MaxStoredBytes} bytes");
        }

        if (writtenSoFar / DiskCheckInterval != (writtenSoFar + bytes) / DiskCheckInterval || writtenSoFar == 0)
        {
            var free = new DriveInfo(directory).AvailableFreeSpace;
            if (free - bytes < _options.MinFreeDiskBytes)
            {
                Interlocked.Add(ref _used, -bytes);
                throw Full($"the disk must keep {_options.MinFreeDiskBytes} bytes free");
            }
        }
    }

    internal void Release(long bytes) => Interlocked.Add(ref _used, -bytes);

    private static UploadRejectedException Full(string why) =>
        new(StatusCodes.Status507InsufficientStorage, $"The upload cannot be stored: {why}.");
}
