using System.Collections.Concurrent;
using Microsoft.Extensions.Options;

namespace Frontend.Api.Replicas;

/// <summary>
/// How long a first attempt may go without headers before a hedge is sent: the 95th percentile of the last answers
/// of the same call (by path), between a floor (below it, the hedge would chase noise) and a ceiling (the most a stuck
/// replica may cost a call before a hedge). Until a call has a few answers, the ceiling. "The Tail at Scale" defers
/// hedges to the 95th percentile, which bounds the extra requests to about 5%; the budget bounds them in any case.
/// Its page: docs/pitfalls/Frontend.Replicas.md.
/// </summary>
internal sealed class HedgeDelay(IOptions<ReplicaOptions> options)
{
    private const int Window = 128;
    private const int Enough = 20;

    private readonly ConcurrentDictionary<string, Recent> _calls = new(StringComparer.Ordinal);

    public TimeSpan For(string path)
    {
        var p95 = _calls.TryGetValue(path, out var recent) ? recent.Percentile(0.95) : null;
        var (floor, ceiling) = (options.Value.HedgeFloor, options.Value.HedgeCeiling);
        return p95 is { } learnt ? TimeSpan.FromTicks(Math.Clamp(learnt.Ticks, floor.Ticks, ceiling.Ticks)) : ceiling;
    }

    public void Add(string path, TimeSpan headers) => _calls.GetOrAdd(path, static _ => new Recent()).Add(headers);

    private sealed class Recent
    {
        private readonly long[] _ticks = new long[Window];
        private int _count;

        public void Add(TimeSpan headers)
        {
            lock (_ticks)
            {
                _ticks[_count++ % Window] = headers.Ticks;
            }
        }

        public TimeSpan? Percentile(double quantile)
        {
            long[] sorted;
            lock (_ticks)
            {
                if (_count < Enough)
                {
                    return null;
                }

                sorted = _ticks[..Math.Min(_count, Window)];
            }

            Array.Sort(sorted);
            return TimeSpan.FromTicks(sorted[(int)Math.Ceiling(quantile * sorted.Length) - 1]);
        }
    }
}
