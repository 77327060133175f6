using System.Diagnostics;

namespace HttpPerf.Tests.Infrastructure;

/// <summary>Waiting for what holds a little later: a service listening, a flag reaching every process, telemetry arriving.</summary>
public static class Poll
{
    /// <summary>
    /// Asks <paramref name="condition"/> every <paramref name="interval"/> until it holds (true), or until an answer asked
    /// for once <paramref name="timeout"/> had passed does not (false). An answer counts by when it was asked, not when it
    /// came: one that takes long on a busy machine (a whole product list) does not use up the time it was given.
    /// </summary>
    public static async Task<bool> UntilAsync(Func<Task<bool>> condition, TimeSpan timeout, TimeSpan interval)
    {
        var clock = Stopwatch.StartNew();
        while (true)
        {
            var asked = clock.Elapsed;
            if (await condition())
            {
                return true;
            }

            if (asked >= timeout)
            {
                return false;
            }

            await Task.Delay(interval, TestContext.Current.CancellationToken);
        }
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
