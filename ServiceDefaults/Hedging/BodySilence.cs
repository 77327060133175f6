using Microsoft.Extensions.Options;

namespace HttpPerf.ServiceDefaults.Hedging;

/// <summary>
/// How long a body may go without bytes, after its headers, before its replica counts as silent: four times the
/// longest wait for the next bytes seen in each of the last 32 bodies read whole, between
/// <see cref="HedgeOptions.SilenceFloor"/> and <see cref="HedgeOptions.SilenceCeiling"/>; the ceiling until 5
/// bodies have been read. Frontend.Api's Catalog reads and the Gateway's resumable relays each learn their own. A healthy body's bytes come in a steady flow (each read waits on the Catalog's next rows), so
/// a wait a few times the longest of them is a replica that froze, died or was cut off in the middle.
/// Its page: docs/pitfalls/Frontend.Replicas.md.
/// </summary>
public sealed class BodySilence<TOptions>(IOptions<TOptions> options)
    where TOptions : HedgeOptions
{
    private const int Window = 32;
    private const int Enough = 5;
    private const int Margin = 4;

    private readonly long[] _longest = new long[Window];
    private int _count;

    public TimeSpan Bound
    {
        get
        {
            var (floor, ceiling) = (options.Value.SilenceFloor, options.Value.SilenceCeiling);
            long longest = 0;
            lock (_longest)
            {
                if (_count < Enough)
                {
                    return ceiling;
                }

                foreach (var ticks in _longest.AsSpan(0, Math.Min(_count, Window)))
                {
                    longest = Math.Max(longest, ticks);
                }
            }

            return TimeSpan.FromTicks(Math.Clamp(Margin * longest, floor.Ticks, ceiling.Ticks));
        }
    }

    /// <summary>A body read whole: the longest it waited for its next bytes.</summary>
    public void Add(TimeSpan longestWait)
    {
        lock (_longest)
        {
            _longest[_count++ % Window] = longestWait.Ticks;
        }
    }
}
