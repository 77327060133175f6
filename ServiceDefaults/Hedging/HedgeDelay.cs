using System.Collections.Concurrent;
using Microsoft.Extensions.Options;

namespace HttpPerf.ServiceDefaults.Hedging;

/// <summary>
/// How long a first attempt may go without headers before a hedge is sent: the 95th percentile of the last answers
/// of the same call (by path in Frontend.Api, by route in the Gateway: a bounded set of keys), between a floor (below
/// it, the hedge would chase noise) and a ceiling (the most a stuck replica may cost a call before a hedge). Until a call has a few answers, the ceiling. "The Tail at Scale" defers
/// hedges to the 95th percentile, which bounds the extra requests to about 5%; the budget bounds them in any case.
/// Its page: docs/pitfalls/Frontend.Replicas.md.
/// </summary>
public sealed class HedgeDelay<TOptions>(IOptions<TOptions> options)
    where TOptions : HedgeOptions
{
    private const int Window = 128;
    private const int Enough = 5;

    private readonly ConcurrentDictionary<string, Recent> _answers = new(StringComparer.Ordinal);

    public TimeSpan For(string call)
    {
        var (floor, ceiling) = (options.Value.HedgeFloor, options.Value.HedgeCeiling);
        return _answers.TryGetValue(call, out var recent) && recent.P95() is { } p95
            ? TimeSpan.FromTicks(Math.Clamp(p95.Ticks, floor.Ticks, ceiling.Ticks))
            : ceiling;
    }

    public void Add(string call, TimeSpan headers) => _answers.GetOrAdd(call, static _ => new Recent()).Add(headers);

    /// <summary>One call's last answers; their p95 is sorted again every eighth answer, not on every call.</summary>
    private sealed class Recent
    {
        private readonly long[] _ticks = new long[Window];
        private int _count;
        private int _sortedAt = -1;
        private TimeSpan? _p95;

        public void Add(TimeSpan headers)
        {
            lock (_ticks)
            {
                _ticks[_count++ % Window] = headers.Ticks;
            }
        }

        public TimeSpan? P95()
        {
            long[] sorted;
            lock (_ticks)
            {
                if (_count < Enough || (_sortedAt >= 0 && _count - _sortedAt < 8))
                {
                    return _count < Enough ? null : _p95;
                }

                _sortedAt = _count;
                sorted = _ticks[..Math.Min(_count, Window)];
            }

            Array.Sort(sorted);
            var p95 = TimeSpan.FromTicks(sorted[(int)Math.Ceiling(0.95 * sorted.Length) - 1]);
            lock (_ticks)
            {
                _p95 = p95;
            }

            return p95;
        }
    }
}
