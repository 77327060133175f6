using System.Buffers;
using System.Security.Cryptography;
using System.Text.Json;
using Microsoft.Extensions.Options;
using Uploads.Api.Reader;

namespace Uploads.Api.Storage;

/// <summary>
/// Durable file storage that any number of replicas can share (one directory, a shared volume). An upload is
/// written in a folder of its own under this replica's <c>.incoming/&lt;instance&gt;/</c>, hashed on the way and
/// flushed to disk, with its receipt beside it; committing is one rename of that folder to <c>&lt;id&gt;/</c>, so no
/// reader and no starting replica ever sees half an upload. A crash or a cut connection leaves only an
/// uncommitted folder, which its replica removes when it starts again, or any replica once its owner is gone:
/// each replica holds a lock on its <c>.incoming/&lt;instance&gt;/.lock</c> while it lives, and nothing another live
/// replica may still acknowledge is ever deleted.
/// </summary>
public sealed class UploadStore(IOptions<UploadOptions> options, IHostEnvironment environment, StorageQuota quota, ILogger<UploadStore> logger) : IHostedService, IDisposable
{
    private const int BufferSize = 128 * 1024;
    private const string LockName = ".lock";
    internal const string DataName = "data";
    private const string ReceiptName = "receipt.json";

    private readonly string _root = Path.Combine(environment.ContentRootPath, options.Value.DataDirectory);
    private FileStream? _lock;

    /// <summary>This replica's name among those sharing the directory: <c>Uploads:InstanceId</c>, or host name and process id.</summary>
    public string Instance { get; } = options.Value.InstanceId is { Length: > 0 } id ? id : $"{Environment.MachineName}-{Environment.ProcessId}";

    private string IncomingRoot => Path.Combine(_root, ".incoming");

    private string Incoming => Path.Combine(IncomingRoot, Instance);

    /// <summary>A new upload's folder under this replica's incoming folder, and its share of the quota (<see cref="UploadBatch.Begin"/>).</summary>
    internal PendingUpload Begin(string fileName, string contentType)
    {
        var id = Guid.NewGuid().ToString("N");
        var folder = Path.Combine(Incoming, id);
        Storage(() => Directory.CreateDirectory(folder));
        return new PendingUpload(id, folder, fileName, contentType, quota.Begin(folder));
    }

    /// <summary>Streams <paramref name="content"/> into <paramref name="upload"/> and completes it; more than <paramref name="maxBytes"/> is a 413.</summary>
    public async Task WriteAsync(Stream content, PendingUpload upload, long maxBytes, CancellationToken cancellationToken)
    {
        var (size, sha256) = await WriteAndHashAsync(content, upload.DataPath, maxBytes, upload.Reservation, cancellationToken);
        await upload.CompleteAsync(size, sha256, cancellationToken);
    }

    internal static Task WriteReceiptAsync(string folder, UploadReceipt receipt, CancellationToken cancellationToken) =>
        Storage(File.WriteAllBytesAsync(Path.Combine(folder, ReceiptName), JsonSerializer.SerializeToUtf8Bytes(receipt, UploadsJsonContext.Default.UploadReceipt), cancellationToken));

    /// <summary>
    /// A write to storage: its failure is the service's (<see cref="UploadRules.StorageFailed"/>: 507 for a full disk,
    /// else 500), never read as the client's body ending early, which an <see cref="IOException"/> from the body is.
    /// </summary>
    internal static async Task Storage(Task write)
    {
        try
        {
            await write;
        }
        catch (Exception error) when (error is IOException or UnauthorizedAccessException)
        {
            throw UploadRules.StorageFailed(error);
        }
    }

    /// <inheritdoc cref="Storage(Task)"/>
    internal static void Storage(Action write)
    {
        try
        {
            write();
        }
        catch (Exception error) when (error is IOException or UnauthorizedAccessException)
        {
            throw UploadRules.StorageFailed(error);
        }
    }

    /// <summary>The commit: one rename, from this replica's incoming folder to the id every replica serves.</summary>
    internal async Task CommitAsync(PendingUpload pending)
    {
        Storage(() => Directory.Move(pending.Folder, Path.Combine(_root, pending.Receipt.Id)));
        await pending.CommittedAsync();
    }

    public async Task<UploadReceipt?> FindAsync(string id, CancellationToken cancellationToken)
    {
        var receipt = Path.Combine(_root, id, ReceiptName);
        if (!IsId(id) || !File.Exists(receipt))
        {
            return null;
        }

        await using var metadata = File.OpenRead(receipt);
        return await JsonSerializer.DeserializeAsync(metadata, UploadsJsonContext.Default.UploadReceipt, cancellationToken);
    }

    public string DataPath(string id) => Path.Combine(_root, id, DataName);

    /// <summary>
    /// Deletes a committed upload; false if there is none by that id. Like the commit, one rename: the folder moves back
    /// into this replica's incoming folder, so no reader ever sees half of it, then it is removed (after a crash, by the
    /// restart's clean-up of the incoming folder) and its bytes leave the quota. A download already reading it finishes.
    /// </summary>
    public async Task<bool> DeleteAsync(string id)
    {
        var folder = Path.Combine(_root, id);
        var doomed = Path.Combine(Incoming, id);
        long size;
        try
        {
            if (!IsId(id))
            {
                return false;
            }

            size = new FileInfo(Path.Combine(folder, DataName)).Length;
            Directory.Move(folder, doomed);
        }
        catch (Exception gone) when (gone is FileNotFoundException or DirectoryNotFoundException)
        {
            return false; // never stored, or another request deleted it first
        }

        Storage(() => Directory.Delete(doomed, recursive: true));
        await quota.RemoveAsync(size);
        return true;
    }

    public async Task StartAsync(CancellationToken cancellationToken)
    {
        _lock = await ClaimIncomingAsync(cancellationToken)
            ?? throw new InvalidOperationException($"Another live replica uses the instance id '{Instance}' in {_root}: set Uploads:InstanceId.");

        // Our own leftovers (we restarted), and those of replicas that are gone (nobody holds their lock).
        var removed = RemovePending(Incoming);
        var gone = new List<string>();
        foreach (var other in Directory.GetDirectories(IncomingRoot).Where(d => d != Incoming))
        {
            using var orphaned = TryLock(Path.Combine(other, LockName), FileMode.Open);
            if (orphaned is null)
            {
                continue;
            }

            try
            {
                // Deleted with its lock held (Linux unlinks an open file): a replica of that name starting again waits
                // for the folder to be gone rather than take it back half-deleted (ClaimIncomingAsync).
                var pending = RemovePending(other);
                Directory.Delete(other, recursive: true);
                removed += pending;
                gone.Add(Path.GetFileName(other));
            }
            catch (IOException)
            {
                // Replicas start together: another one took the lock between our look and ours, and cleared it first
                // (or is clearing it still). What is left, the next start clears.
            }
        }

        if (removed > 0)
        {
            logger.LogWarning("Removed {Count} uploads that were never acknowledged (interrupted before their commit)", removed);
        }

        // The quota counts what is stored now: every committed upload, as it is on disk.
        var stored = Directory.GetDirectories(_root).Where(d => IsId(Path.GetFileName(d))).Sum(d => new FileInfo(Path.Combine(d, DataName)).Length);
        await quota.StartAsync(stored, Instance, gone);
    }

    /// <summary>
    /// This replica's incoming folder, its lock held. Replicas that start together each take the folders whose lock
    /// nobody holds for a gone replica's, and delete them: a folder made and then locked could be taken in between.
    /// So a new one is made outside <c>.incoming</c> (in the data folder, under a name that is no upload's id), locked,
    /// and only then moved into place, in one rename. One our last run left is ours once we hold its lock and it is
    /// still there; while another replica holds it, it is clearing it, and we wait for it to be gone. Null when a live
    /// replica uses this instance id.
    /// </summary>
    private async Task<FileStream?> ClaimIncomingAsync(CancellationToken cancellationToken)
    {
        Directory.CreateDirectory(IncomingRoot);
        foreach (var stale in Directory.GetDirectories(_root, $".claiming-{Instance}-*"))
        {
            Directory.Delete(stale, recursive: true); // our own claim, cut short by a crash
        }

        var lockPath = Path.Combine(Incoming, LockName);
        for (var attempt = 0; attempt < 100; attempt++)
        {
            if (Directory.Exists(Incoming))
            {
                // Its lock file, once it has one: a folder without one after a while is a crash's (an older version made
                // the folder first), which no other replica touches, so we may give it one.
                var held = TryLock(lockPath, attempt < 25 ? FileMode.Open : FileMode.OpenOrCreate);
                if (held is not null && File.Exists(lockPath))
                {
                    return held;
                }

                held?.Dispose(); // cleared under us: the next attempt makes it anew
            }
            else
            {
                var staging = Directory.CreateDirectory(Path.Combine(_root, $".claiming-{Instance}-{Guid.NewGuid():N}")).FullName;
                var held = TryLock(Path.Combine(staging, LockName), FileMode.CreateNew)!;
                try
                {
                    Directory.Move(staging, Incoming);
                    return held;
                }
                catch (IOException)
                {
                    // Our last run's folder appeared, or is still being cleared: the next attempt looks again.
                    held.Dispose();
                    Directory.Delete(staging, recursive: true);
                }
            }

            await Task.Delay(20, cancellationToken);
        }

        return null;
    }

    public Task StopAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public void Dispose() => _lock?.Dispose();

    /// <summary>An exclusive lock on <paramref name="path"/> (flock on Linux: released by the kernel when its process dies), or null if another process holds it.</summary>
    private static FileStream? TryLock(string path, FileMode mode)
    {
        try
        {
            return new FileStream(path, mode, FileAccess.ReadWrite, FileShare.None);
        }
        catch (IOException)
        {
            return null; // held by a live replica, or (FileMode.Open) no lock file yet: that replica is still starting
        }
    }

    private static int RemovePending(string incoming)
    {
        var pending = Directory.GetDirectories(incoming);
        foreach (var upload in pending)
        {
            Directory.Delete(upload, recursive: true);
        }

        return pending.Length;
    }

    /// <summary>
    /// Copies <paramref name="content"/> to a new file at <paramref name="path"/>, hashing it on the way, with two
    /// buffers in turn: the next read is already under way while the last buffer is hashed and written, so the
    /// network, the hash and the disk overlap instead of taking turns.
    /// </summary>
    private static async Task<(long Size, string Sha256)> WriteAndHashAsync(Stream content, string path, long maxBytes, QuotaReservation reservation, CancellationToken cancellationToken)
    {
        using var hash = IncrementalHash.CreateHash(HashAlgorithmName.SHA256);
        FileStream? opened = null;
        Storage(() => opened = new FileStream(path, FileMode.CreateNew, FileAccess.Write, FileShare.None, bufferSize: 0, FileOptions.Asynchronous));
        await using var file = opened!;
        byte[] filling = ArrayPool<byte>.Shared.Rent(BufferSize), ready = ArrayPool<byte>.Shared.Rent(BufferSize);
        var reading = content.ReadAsync(filling, cancellationToken).AsTask();
        long size = 0;
        try
        {
            int read;
            while ((read = await reading) > 0)
            {
                (filling, ready) = (ready, filling); // ready: the bytes just read; filling: free for the next read
                size += read;
                if (size > maxBytes)
                {
                    throw UploadRules.TooLarge(maxBytes);
                }

                await reservation.AddAsync(read);
                reading = content.ReadAsync(filling, cancellationToken).AsTask();
                hash.AppendData(ready, 0, read);
                await Storage(file.WriteAsync(ready.AsMemory(0, read), cancellationToken).AsTask());
            }

            Storage(() => file.Flush(flushToDisk: true));
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(ready);
            // When a write fails, a read may still be filling the other buffer: it goes back to the pool when that
            // read ends, without holding up the error response.
            var inFlight = filling;
            _ = reading.ContinueWith(
                read => { _ = read.Exception; ArrayPool<byte>.Shared.Return(inFlight); },
                CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
        }

        return (size, Convert.ToHexStringLower(hash.GetHashAndReset()));
    }

    private static bool IsId(string id) => id.Length == 32 && id.All(char.IsAsciiHexDigitLower);
}
