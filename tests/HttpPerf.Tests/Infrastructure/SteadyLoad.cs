using System.Diagnostics;

namespace HttpPerf.Tests.Infrastructure;

/// <summary>
/// Requests through the Gateway at a steady rate while a fault is made, each one counted: when it started, what it
/// asked, its status (0: no answer at all), how long it took. Bounded in count and time, and stops by itself.
/// </summary>
public sealed class SteadyLoad
{
    private readonly List<Exchange> _exchanges = [];
    private readonly List<TimeSpan> _inFlight = [];
    private readonly Stopwatch _clock = Stopwatch.StartNew();

    public sealed record Exchange(TimeSpan Start, string Path, int Status, TimeSpan Elapsed, string? Error);

    /// <summary>Seconds since the load started: when a fault was made, by the same clock as each exchange.</summary>
    public TimeSpan Now => _clock.Elapsed;

    public IReadOnlyList<Exchange> Exchanges
    {
        get
        {
            lock (_exchanges)
            {
                return [.. _exchanges];
            }
        }
    }

    private long _stopAt = long.MaxValue;

    /// <summary>Sends no request from <paramref name="at"/> on (on this load's clock), however long its run was given.</summary>
    public void StopAt(TimeSpan at) => Volatile.Write(ref _stopAt, at.Ticks);

    /// <summary>Sends <paramref name="perSecond"/> requests a second, round the <paramref name="paths"/>, for <paramref name="duration"/> (or until <see cref="StopAt"/>); returns when every one has ended.</summary>
    public async Task RunAsync(HttpClient gateway, IReadOnlyList<string> paths, int perSecond, TimeSpan duration, CancellationToken cancellationToken)
    {
        var running = new List<Task>();
        var interval = TimeSpan.FromSeconds(1.0 / perSecond);
        for (var i = 0; _clock.Elapsed < duration && _clock.Elapsed.Ticks < Volatile.Read(ref _stopAt); i++)
        {
            running.Add(SendAsync(gateway, paths[i % paths.Count], cancellationToken));
            var due = interval * (i + 1) - _clock.Elapsed;
            if (due > TimeSpan.Zero)
            {
                await Task.Delay(due, cancellationToken);
            }
        }

        await Task.WhenAll(running);
    }

    /// <summary>Waits, up to <paramref name="timeout"/>, until every request sent before <paramref name="sentBefore"/> has ended.</summary>
    public async Task<bool> SettledAsync(TimeSpan sentBefore, TimeSpan timeout) =>
        await Poll.UntilAsync(() =>
        {
            lock (_exchanges)
            {
                return !_inFlight.Any(start => start <= sentBefore);
            }
        }, timeout);

    private async Task SendAsync(HttpClient gateway, string path, CancellationToken cancellationToken)
    {
        var start = _clock.Elapsed;
        lock (_exchanges)
        {
            _inFlight.Add(start);
        }

        int status;
        string? error = null;
        try
        {
            using var response = await gateway.GetAsync(path, HttpCompletionOption.ResponseContentRead, cancellationToken);
            status = (int)response.StatusCode;
        }
        catch (Exception failure) when (failure is HttpRequestException or TaskCanceledException)
        {
            status = 0;
            error = failure.Message;
        }

        lock (_exchanges)
        {
            _exchanges.Add(new Exchange(start, path, status, _clock.Elapsed - start, error));
            _inFlight.Remove(start);
        }
    }

    /// <summary>The figures of one fault: sent, failed (by status), the slowest, and the last failure's start after <paramref name="fault"/>.</summary>
    public string Summary(TimeSpan fault)
    {
        var all = Exchanges;
        var failed = all.Where(e => e.Status is < 200 or >= 300).ToList();
        var lastFailure = failed.Count == 0 ? "none" : $"{(failed.Max(e => e.Start) - fault).TotalSeconds:F1} s after the fault";
        var slowest = all.MaxBy(e => e.Elapsed)!;
        return $"{all.Count} sent, {failed.Count} failed ({string.Join(", ", failed.GroupBy(e => e.Status).Select(g => $"{g.Count()} x {g.Key}"))}), " +
               $"slowest {slowest.Elapsed.TotalSeconds:F2} s ({slowest.Path}, begun {(slowest.Start - fault).TotalSeconds:F1} s after the fault), last failure started {lastFailure}" +
               string.Concat(failed.Where(e => e.Error is not null).Select(e => e.Error).Distinct().Take(3).Select(e => $"; {e}"));
    }
}
