using System.Diagnostics;

namespace HttpPerf.Tests.Infrastructure;

/// <summary>Waiting for what holds a little later: a service listening, a flag reaching every process, telemetry arriving.</summary>
public static class Poll
{
    /// <summary>Asks <paramref name="condition"/> every <paramref name="interval"/> until it holds (true) or <paramref name="timeout"/> has passed (false).</summary>
    public static async Task<bool> UntilAsync(Func<Task<bool>> condition, TimeSpan timeout, TimeSpan interval)
    {
        var clock = Stopwatch.StartNew();
        while (!await condition())
        {
            if (clock.Elapsed >= timeout)
            {
                return false;
            }

            await Task.Delay(interval, TestContext.Current.CancellationToken);
        }

        return true;
    }

    /// <summary><see cref="UntilAsync(Func{Task{bool}}, TimeSpan, TimeSpan)"/> for a condition at hand, asked every 200 ms.</summary>
    public static Task<bool> UntilAsync(Func<bool> condition, TimeSpan timeout) =>
        UntilAsync(() => Task.FromResult(condition()), timeout, TimeSpan.FromMilliseconds(200));

    /// <summary>Waits until <paramref name="clock"/> reads <paramref name="at"/>; returns at once where it already has.</summary>
    public static async Task UntilElapsedAsync(Stopwatch clock, TimeSpan at)
    {
        if (at - clock.Elapsed is { } wait && wait > TimeSpan.Zero)
        {
            await Task.Delay(wait, TestContext.Current.CancellationToken);
        }
    }
}
