using System.Buffers;
using System.Security.Cryptography;
using System.Text.Json;
using Microsoft.Extensions.Options;

namespace Uploads.Api.Storage;

/// <summary>
/// Durable file storage. A file is written under <c>.incoming/</c>, hashed on the way and flushed to disk
/// (<see cref="PendingUpload"/>); committing moves it to its id, with its metadata moved last as the
/// commit mark. A crash or a cut connection never leaves a partial file under a real id, and leftovers
/// are removed at start.
/// </summary>
public sealed class UploadStore(IOptions<UploadOptions> options, IHostEnvironment environment, StorageQuota quota, ILogger<UploadStore> logger) : IHostedService
{
    private const int BufferSize = 128 * 1024;
    private readonly string _root = Path.Combine(environment.ContentRootPath, options.Value.DataDirectory);

    private string Incoming => Path.Combine(_root, ".incoming");

    /// <summary>Streams <paramref name="content"/> to a pending file; more than <paramref name="maxBytes"/> is a 413.</summary>
    public async Task<PendingUpload> WriteAsync(Stream content, string fileName, string contentType, long maxBytes, CancellationToken cancellationToken)
    {
        var id = Guid.NewGuid().ToString("N");
        var dataPath = Path.Combine(Incoming, id);
        long reserved = 0;
        try
        {
            var (size, sha256) = await WriteAndHashAsync(content, dataPath, maxBytes, bytes => { quota.Reserve(bytes, reserved, Incoming); reserved += bytes; }, cancellationToken);
            var pending = new PendingUpload(new UploadReceipt(id, size, sha256, fileName, contentType), dataPath, quota);
            await File.WriteAllBytesAsync(pending.MetadataPath, JsonSerializer.SerializeToUtf8Bytes(pending.Receipt, UploadsJsonContext.Default.UploadReceipt), cancellationToken);
            return pending;
        }
        catch
        {
            quota.Release(reserved);
            File.Delete(dataPath);
            File.Delete(dataPath + ".json");
            throw;
        }
    }

    internal void Commit(PendingUpload pending)
    {
        File.Move(pending.DataPath, DataPath(pending.Receipt.Id));
        File.Move(pending.MetadataPath, MetadataPath(pending.Receipt.Id));
        pending.Committed = true;
    }

    public async Task<UploadReceipt?> FindAsync(string id, CancellationToken cancellationToken)
    {
        if (!IsId(id) || !File.Exists(MetadataPath(id)))
        {
            return null;
        }

        await using var metadata = File.OpenRead(MetadataPath(id));
        return await JsonSerializer.DeserializeAsync(metadata, UploadsJsonContext.Default.UploadReceipt, cancellationToken);
    }

    public string DataPath(string id) => Path.Combine(_root, id);

    public Task StartAsync(CancellationToken cancellationToken)
    {
        Directory.CreateDirectory(_root);
        var leftovers = Directory.Exists(Incoming) ? Directory.GetFiles(Incoming) : [];
        foreach (var file in leftovers)
        {
            File.Delete(file);
        }

        // Data moved into place without its metadata (a crash between the two moves) was never acknowledged.
        var orphans = Directory.GetFiles(_root).Where(f => IsId(Path.GetFileName(f)) && !File.Exists(f + ".json")).ToList();
        foreach (var orphan in orphans)
        {
            File.Delete(orphan);
        }

        if (leftovers.Length + orphans.Count > 0)
        {
            logger.LogWarning("Removed {Count} leftovers of interrupted uploads", leftovers.Length + orphans.Count);
        }

        // The quota counts what is stored now: every committed file, as it is on disk.
        quota.Start(Directory.GetFiles(_root).Where(f => IsId(Path.GetFileName(f))).Sum(f => new FileInfo(f).Length));

        Directory.CreateDirectory(Incoming);
        return Task.CompletedTask;
    }

    public Task StopAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    /// <summary>
    /// Copies <paramref name="content"/> to a new file at <paramref name="path"/>, hashing it on the way, with two
    /// buffers in turn: the next read is already under way while the last buffer is hashed and written, so the
    /// network, the hash and the disk overlap instead of taking turns.
    /// </summary>
    private static async Task<(long Size, string Sha256)> WriteAndHashAsync(Stream content, string path, long maxBytes, Action<int> reserve, CancellationToken cancellationToken)
    {
        using var hash = IncrementalHash.CreateHash(HashAlgorithmName.SHA256);
        await using var file = new FileStream(path, FileMode.CreateNew, FileAccess.Write, FileShare.None, bufferSize: 0, FileOptions.Asynchronous);
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

                reserve(read);
                reading = content.ReadAsync(filling, cancellationToken).AsTask();
                hash.AppendData(ready, 0, read);
                await file.WriteAsync(ready.AsMemory(0, read), cancellationToken);
            }

            file.Flush(flushToDisk: true);
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

    private string MetadataPath(string id) => DataPath(id) + ".json";

    private static bool IsId(string id) => id.Length == 32 && id.All(char.IsAsciiHexDigitLower);
}
