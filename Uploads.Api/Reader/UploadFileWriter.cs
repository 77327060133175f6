using System.Buffers;
using System.Collections.Concurrent;
using System.Runtime.InteropServices;
using System.Security.Cryptography;
using Microsoft.Win32.SafeHandles;
using Uploads.Api.Storage;

namespace Uploads.Api.Reader;

/// <summary>
/// One file that the optimized reader pushes Kestrel's buffers into. The bytes are copied into a 1 MiB block of
/// aligned memory; each full block is hashed while it is hot in the cache and written with direct I/O
/// (<see cref="DirectIo"/>), from this memory to the disk, while the next block fills. An upload is written once and
/// not read back soon, so the page cache has nothing to give it, and it costs: on the machine the bench runs on, a
/// buffered write into page-cache memory not touched lately costs 2.3 ms of CPU per MiB (235 ms per 100 MiB,
/// <c>dd</c> into new files once a GiB has gone by), against 0.1 ms direct. The last partial block is padded to the
/// alignment, written, and cut back to the file's size; the fsync that completes the file then has no dirty page
/// to write. Where the file system has no direct I/O the same blocks go through the page cache. A failed upload's
/// folder and quota are its batch's to clean up (<see cref="PendingUpload"/>); this writer only closes its file.
/// </summary>
public sealed class UploadFileWriter : IAsyncDisposable
{
    private const int BlockSize = 1 << 20;

    private readonly PendingUpload _upload;
    private readonly long _maxBytes;
    private readonly SafeFileHandle _file;
    private readonly IncrementalHash _hash = IncrementalHash.CreateHash(HashAlgorithmName.SHA256);
    private AlignedBlock _filling = AlignedBlock.Rent();
    private AlignedBlock _writing = AlignedBlock.Rent();
    private Task _write = Task.CompletedTask;
    private int _filled;
    private long _offset;
    private long _size;

    public UploadFileWriter(PendingUpload upload, long maxBytes)
    {
        (_upload, _maxBytes) = (upload, maxBytes);
        SafeFileHandle? file = null;
        UploadStore.Storage(() => file = File.OpenHandle(upload.DataPath, FileMode.CreateNew, FileAccess.Write, FileShare.None));
        _file = file!;
        DirectIo.TryEnable(_file);
    }

    /// <summary>Takes <paramref name="data"/> (valid only during the call); more than the file's limit in all is a 413.</summary>
    public async ValueTask WriteAsync(ReadOnlySequence<byte> data)
    {
        _size += data.Length;
        if (_size > _maxBytes)
        {
            throw UploadRules.TooLarge(_maxBytes);
        }

        await _upload.Reservation.AddAsync(checked((int)data.Length));
        while (!data.IsEmpty)
        {
            var take = (int)Math.Min(data.Length, BlockSize - _filled);
            data.Slice(0, take).CopyTo(_filling.Memory.Span[_filled..]);
            data = data.Slice(take);
            _filled += take;
            if (_filled == BlockSize)
            {
                await WriteBlockAsync(BlockSize);
            }
        }
    }

    /// <summary>The file is on disk: flushed, with its receipt beside it, ready for the batch to commit.</summary>
    public async Task CompleteAsync(CancellationToken cancellationToken)
    {
        if (_filled > 0)
        {
            var padded = (_filled + DirectIo.Alignment - 1) / DirectIo.Alignment * DirectIo.Alignment;
            _filling.Memory.Span[_filled..padded].Clear();
            await WriteBlockAsync(padded);
        }

        await UploadStore.Storage(_write);
        UploadStore.Storage(() =>
        {
            RandomAccess.SetLength(_file, _size);
            RandomAccess.FlushToDisk(_file);
        });
        _file.Dispose();
        await _upload.CompleteAsync(_size, Convert.ToHexStringLower(_hash.GetHashAndReset()), cancellationToken);
    }

    /// <summary>Hashes the filled block and starts writing <paramref name="length"/> bytes of it, once the block before it is written.</summary>
    private async ValueTask WriteBlockAsync(int length)
    {
        _hash.AppendData(_filling.Memory.Span[.._filled]);
        await UploadStore.Storage(_write);
        (_filling, _writing) = (_writing, _filling);
        _write = RandomAccess.WriteAsync(_file, _writing.Memory[..length], _offset).AsTask();
        _offset += BlockSize;
        _filled = 0;
    }

    public async ValueTask DisposeAsync()
    {
        _hash.Dispose();
        await _write.ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing); // failed, the request fails anyway
        AlignedBlock.Return(_filling);
        AlignedBlock.Return(_writing);
        _file.Dispose();
    }

    /// <summary>A <see cref="BlockSize"/> span of memory at an address that is a multiple of <see cref="DirectIo.Alignment"/>, from a small shared pool.</summary>
    private sealed class AlignedBlock
    {
        private static readonly ConcurrentBag<AlignedBlock> Pool = [];

        private AlignedBlock()
        {
            // On the pinned object heap the array never moves, so an aligned offset into it stays aligned.
            var array = GC.AllocateUninitializedArray<byte>(BlockSize + DirectIo.Alignment, pinned: true);
            var address = Marshal.UnsafeAddrOfPinnedArrayElement(array, 0);
            var skip = (int)((DirectIo.Alignment - (address % DirectIo.Alignment)) % DirectIo.Alignment);
            Memory = array.AsMemory(skip, BlockSize);
        }

        public Memory<byte> Memory { get; }

        public static AlignedBlock Rent() => Pool.TryTake(out var block) ? block : new AlignedBlock();

        public static void Return(AlignedBlock block)
        {
            if (Pool.Count < 2 * Environment.ProcessorCount)
            {
                Pool.Add(block);
            }
        }
    }
}
