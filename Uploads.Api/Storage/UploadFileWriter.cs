using System.Buffers;
using System.Security.Cryptography;
using Microsoft.Win32.SafeHandles;

namespace Uploads.Api.Storage;

/// <summary>
/// One file that the caller pushes in as slices of memory it owns (the optimized reader: Kestrel's own buffers).
/// Each push is hashed, then written at its offset with one gathered write (<c>pwritev</c>) straight from those
/// slices, synchronously into the page cache: no copy, and no thread-pool hop per write as an asynchronous
/// <see cref="FileStream"/> takes on Linux. Every 32 MiB a flush to disk starts in the background, so the fsync
/// that completes the file waits for the last stretch only. Disposed before it completes, it deletes its folder
/// and gives its quota back.
/// </summary>
public sealed class UploadFileWriter : IAsyncDisposable
{
    private const long FlushEvery = 32L << 20;

    private readonly string _id;
    private readonly string _folder;
    private readonly string _fileName;
    private readonly string _contentType;
    private readonly long _maxBytes;
    private readonly QuotaReservation _reservation;
    private readonly SafeFileHandle _file;
    private readonly IncrementalHash _hash = IncrementalHash.CreateHash(HashAlgorithmName.SHA256);
    private readonly List<ReadOnlyMemory<byte>> _slices = [];
    private long _size;
    private long _flushedAt;
    private Task _flushing = Task.CompletedTask;
    private PendingUpload? _pending;

    internal UploadFileWriter(string id, string folder, string path, string fileName, string contentType, long maxBytes, QuotaReservation reservation)
    {
        (_id, _folder, _fileName, _contentType, _maxBytes, _reservation) = (id, folder, fileName, contentType, maxBytes, reservation);
        _file = File.OpenHandle(path, FileMode.CreateNew, FileAccess.Write, FileShare.None);
    }

    /// <summary>Hashes and writes <paramref name="data"/>; more than the file's limit in all is a 413.</summary>
    public async ValueTask WriteAsync(ReadOnlySequence<byte> data)
    {
        var offset = _size;
        _size += data.Length;
        if (_size > _maxBytes)
        {
            throw UploadRules.TooLarge(_maxBytes);
        }

        await _reservation.AddAsync(checked((int)data.Length));
        _slices.Clear();
        foreach (var slice in data)
        {
            _hash.AppendData(slice.Span);
            _slices.Add(slice);
        }

        RandomAccess.Write(_file, _slices, offset);
        if (_size - _flushedAt >= FlushEvery && _flushing.IsCompleted)
        {
            _flushedAt = _size;
            _flushing = Task.Run(() => RandomAccess.FlushToDisk(_file));
        }
    }

    /// <summary>The file is on disk: flushed, with its receipt beside it, ready for the batch to commit.</summary>
    public async Task<PendingUpload> CompleteAsync(CancellationToken cancellationToken)
    {
        await _flushing;
        RandomAccess.FlushToDisk(_file);
        _file.Dispose();
        var receipt = new UploadReceipt(_id, _size, Convert.ToHexStringLower(_hash.GetHashAndReset()), _fileName, _contentType);
        await UploadStore.WriteReceiptAsync(_folder, receipt, cancellationToken);
        return _pending = new PendingUpload(receipt, _folder, _reservation);
    }

    public async ValueTask DisposeAsync()
    {
        _hash.Dispose();
        if (_pending is not null)
        {
            return; // the batch owns it now
        }

        await _flushing.ContinueWith(_ => { }, CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
        _file.Dispose();
        await _reservation.ReleaseAsync();
        Directory.Delete(_folder, recursive: true);
    }
}
