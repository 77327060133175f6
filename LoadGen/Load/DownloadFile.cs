namespace LoadGen.Load;

/// <summary>
/// The one file a LoadGen run downloads, the live load's and every A/B measurement's: stored through the Gateway
/// when first needed, deleted when the run ends, so repeated measurements never add to the uploads folder.
/// </summary>
public sealed class DownloadFile(HttpClient gateway, long size) : IAsyncDisposable
{
    private readonly SemaphoreSlim _storing = new(1, 1);
    private string? _id;

    public long Size => size;

    /// <summary>The stored file's id, stored now if this is the first ask.</summary>
    public async Task<string> IdAsync(CancellationToken cancellationToken)
    {
        await _storing.WaitAsync(cancellationToken);
        try
        {
            return _id ??= await SyntheticFileContent.StoreAsync(gateway, size, cancellationToken);
        }
        finally
        {
            _storing.Release();
        }
    }

    public async ValueTask DisposeAsync()
    {
        if (_id is { } id)
        {
            try
            {
                using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(10));
                using var span = Exchange.StartSpan(HttpMethod.Delete, "/api/uploads/{id}");
                using var deleted = await gateway.DeleteAsync($"/api/uploads/{id}", timeout.Token);
            }
            catch (Exception exception) when (exception is HttpRequestException or TaskCanceledException)
            {
                // The Gateway is gone first (the whole system stopping): the file stays, as any upload would.
            }
        }

        _storing.Dispose();
    }
}
