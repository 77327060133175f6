using System.Text.Json;
using Catalog.Api.Data;

namespace Catalog.Api.Serialization;

/// <summary>
/// The benchmark's limit, not a pitfall: the catalog's JSON serialized once (the streaming writer's exact
/// bytes) and kept in memory, so serving it costs only the copy to the socket. Mapped only when
/// <c>Catalog:EnableBaseline</c> is set.
/// </summary>
public sealed class CatalogBaseline(CatalogStore store)
{
    private readonly SemaphoreSlim _once = new(1, 1);
    private byte[]? _bytes;

    public async ValueTask<byte[]> GetBytesAsync(CancellationToken cancellationToken)
    {
        if (Volatile.Read(ref _bytes) is { } ready)
        {
            return ready;
        }

        await _once.WaitAsync(cancellationToken);
        try
        {
            if (_bytes is null)
            {
                using var buffer = new MemoryStream();
                await JsonSerializer.SerializeAsync(buffer, store.StreamAllAsync(0, cancellationToken), CatalogJsonContext.Default.IAsyncEnumerableProduct, cancellationToken);
                Volatile.Write(ref _bytes, buffer.ToArray());
            }

            return _bytes!;
        }
        finally
        {
            _once.Release();
        }
    }
}
