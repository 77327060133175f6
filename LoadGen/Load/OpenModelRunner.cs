using System.Diagnostics;

namespace LoadGen.Load;

/// <summary>
/// Open-model load: requests are started at a target arrival rate whatever the responses do, with at
/// most <c>maxInFlight</c> outstanding. Latency is measured from each request's intended start, not from
/// when a slot freed up, so a stalled server shows in the percentiles instead of slowing the load down
/// (coordinated omission corrected). The rate can be changed while it runs through <see cref="Rate"/>.
/// </summary>
public sealed class OpenModelRunner(HttpClient client, Func<long, (string Mode, HttpRequestMessage Request)> nextRequest, int maxInFlight)
{
    private readonly System.Collections.Concurrent.ConcurrentDictionary<string, ModeStats> _stats = new();
    private LoadGen.Control.LoadGenMetrics? _metrics;

    private readonly SemaphoreSlim _slots = new(maxInFlight, maxInFlight);
    private long _inFlight;
    private bool _running;

    /// <summary>Target arrivals per second; read before each arrival, so a change applies at once.</summary>
    public RateControl Rate { get; } = new();

    public long InFlight => Interlocked.Read(ref _inFlight);

    /// <summary>The results so far, by key, for a live view.</summary>
    public IReadOnlyList<ModeStats> Current => _stats.Values.OrderBy(s => s.Mode, StringComparer.Ordinal).ToList();

    /// <summary>Also report every request to the dashboard (rate, in flight, latency by mode).</summary>
    public OpenModelRunner WithMetrics()
    {
        _metrics = new LoadGen.Control.LoadGenMetrics(() => Rate.PerSecond, () => InFlight);
        return this;
    }

    /// <summary>When the run started; null before.</summary>
    public DateTimeOffset? RunningSince { get; private set; }

    /// <summary>When the run ends by itself; null before it starts and for a run that goes on until stopped.</summary>
    public DateTimeOffset? Until { get; private set; }

    public bool IsRunning => Volatile.Read(ref _running);

    /// <summary>
    /// Sends for <paramref name="duration"/>, or until <paramref name="cancellationToken"/> is cancelled when it is null
    /// (under the AppHost: until the resource is stopped). Stopping is not an error: what was sent so far is returned,
    /// requests still in flight are abandoned uncounted.
    /// </summary>
    public async Task<IReadOnlyDictionary<string, ModeStats>> RunAsync(TimeSpan? duration, CancellationToken cancellationToken)
    {
        var running = new List<Task>();
        var clock = Stopwatch.StartNew();
        var intended = TimeSpan.Zero;
        RunningSince = DateTimeOffset.UtcNow;
        Until = RunningSince + duration;
        Volatile.Write(ref _running, true);
        try
        {
            for (long i = 0; (duration is null || intended < duration) && !cancellationToken.IsCancellationRequested; i++)
            {
                var wait = intended - clock.Elapsed;
                if (wait > TimeSpan.Zero && !await DelayAsync(wait, cancellationToken))
                {
                    break;
                }

                var (mode, request) = nextRequest(i);
                var modeStats = _stats.GetOrAdd(mode, key => new ModeStats(key));

                // The clock started for this request at its intended time, even if it must wait for a slot
                // (never in the future: a timer may wake a little early).
                var now = Stopwatch.GetTimestamp();
                var intendedTimestamp = Math.Min(now, now - (long)((clock.Elapsed - intended).TotalSeconds * Stopwatch.Frequency));
                running.Add(SendAsync(request, modeStats, intendedTimestamp, cancellationToken));
                intended += TimeSpan.FromSeconds(1 / Math.Max(Rate.PerSecond, 0.001));

                // A run with no end would otherwise hold every finished request's task.
                if (i % 1_000 == 999)
                {
                    running.RemoveAll(task => task.IsCompletedSuccessfully);
                }
            }

            await Task.WhenAll(running);
            return _stats;
        }
        finally
        {
            Volatile.Write(ref _running, false);
        }
    }

    private static async Task<bool> DelayAsync(TimeSpan wait, CancellationToken cancellationToken)
    {
        try
        {
            await Task.Delay(wait, cancellationToken);
            return true;
        }
        catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
        {
            return false;
        }
    }

    private async Task SendAsync(HttpRequestMessage request, ModeStats stats, long intendedTimestamp, CancellationToken cancellationToken)
    {
        Exchange.Outcome outcome;
        try
        {
            await _slots.WaitAsync(cancellationToken);
        }
        catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
        {
            request.Dispose();
            return;
        }

        Interlocked.Increment(ref _inFlight);
        try
        {
            outcome = await Exchange.SendAsync(client, request, new byte[64 * 1024], cancellationToken);
        }
        catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
        {
            return;
        }
        finally
        {
            Interlocked.Decrement(ref _inFlight);
            _slots.Release();
        }

        stats.Record(intendedTimestamp, outcome);
        _metrics?.Record(stats.Mode, outcome.Variants, Stopwatch.GetElapsedTime(intendedTimestamp), outcome.Ok);
    }
}

/// <summary>The target arrival rate, changeable from another thread (a dashboard command, an HTTP call).</summary>
public sealed class RateControl
{
    private double _perSecond = 1;

    public double PerSecond
    {
        get => Volatile.Read(ref _perSecond);
        set => Volatile.Write(ref _perSecond, value > 0 ? value : throw new ArgumentOutOfRangeException(nameof(value), "The rate must be positive."));
    }
}
