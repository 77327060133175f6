using System.Diagnostics;

namespace HttpPerf.ServiceDefaults.Hedging;

/// <summary>
/// The reads of one response body, each given a bound when the caller could do something else on silence: a read that
/// waits longer is cancelled (which closes its connection) and reported as silence, not as the caller's cancellation.
/// Tracks the longest wait of the bounded reads, which <see cref="BodySilence{TOptions}"/> learns from. One timer for
/// the body, reset after each read. Its page: docs/pitfalls/Frontend.Replicas.md.
/// </summary>
public sealed class BoundedReads : IDisposable
{
    private CancellationTokenSource? _timer; // linked to the caller's token, with the bound of each read
    private CancellationToken _for;

    public TimeSpan LongestWait { get; private set; }

    /// <summary>One read of <paramref name="body"/>: the bytes read (0 at its end), or null if it went silent past <paramref name="bound"/>.</summary>
    public async ValueTask<int?> ReadAsync(Stream body, Memory<byte> into, TimeSpan? bound, CancellationToken cancellationToken)
    {
        if (bound is not { } limit)
        {
            return await body.ReadAsync(into, cancellationToken);
        }

        if (_timer is not null && _for != cancellationToken)
        {
            Reset();
        }

        _for = cancellationToken;
        _timer ??= CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        _timer.CancelAfter(limit);
        var started = Stopwatch.GetTimestamp();
        try
        {
            var read = await body.ReadAsync(into, _timer.Token);
            var waited = Stopwatch.GetElapsedTime(started);
            LongestWait = waited > LongestWait ? waited : LongestWait;
            if (!_timer.TryReset())
            {
                // The bound passed as the read ended: HttpClient has closed the connection, and a zero-byte read (which
                // waits for data and takes none) ends with 0 rather than an exception. Silence, not the body's end.
                Reset();
                if (read == 0 && !cancellationToken.IsCancellationRequested)
                {
                    return null;
                }
            }

            return read;
        }
        catch (Exception) when (_timer.IsCancellationRequested && !cancellationToken.IsCancellationRequested)
        {
            // The bound passed. HttpClient closes the connection under a cancelled read, and the read ends in an
            // OperationCanceledException, or, for a zero-byte read, in the closed stream's ObjectDisposedException.
            Reset();
            return null;
        }
    }

    public void Dispose() => Reset();

    private void Reset()
    {
        _timer?.Dispose();
        _timer = null;
    }
}
