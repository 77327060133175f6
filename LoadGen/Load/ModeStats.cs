using System.Diagnostics;
using HdrHistogram;
using HttpPerf.ServiceDefaults.Contract;

namespace LoadGen.Load;

/// <summary>Latency (HdrHistogram, 3 significant digits), errors and bytes for one mode.</summary>
public sealed class ModeStats(string mode)
{
    private readonly LongHistogram _latency = new(TimeStamp.Minutes(10), 3);
    private readonly LongHistogram _firstByte = new(TimeStamp.Minutes(10), 3);
    private readonly System.Collections.Concurrent.ConcurrentDictionary<string, long> _served = new(StringComparer.Ordinal);
    private long _errors;
    private long _bytes;

    public string Mode { get; } = mode;

    public long Count => _latency.TotalCount;

    public long Errors => Interlocked.Read(ref _errors);

    public long Bytes => Interlocked.Read(ref _bytes);

    /// <summary>
    /// How many requests each variant served, as the responses' <c>X-Perf-Variants</c> summarize it (naive,
    /// optimized, mixed, none): in follow-flags mode, this is how a flag flip shows.
    /// </summary>
    public IReadOnlyDictionary<string, long> Served => _served.ToDictionary(s => s.Key, s => s.Value, StringComparer.Ordinal);

    /// <summary>Records one exchange that started at <paramref name="startTimestamp"/>.</summary>
    public void Record(long startTimestamp, Exchange.Outcome outcome)
    {
        Record(startTimestamp, outcome.Bytes, outcome.Ok, outcome.HeadersTimestamp, outcome.EndTimestamp);
        if (outcome.HeadersTimestamp > 0)
        {
            _served.AddOrUpdate(PerfMode.Summarize(outcome.Variants), 1, (_, n) => n + 1);
        }
    }

    /// <summary>
    /// Records one request: started at <paramref name="startTimestamp"/>, headers at <paramref name="headersTimestamp"/>
    /// (0: none), ended at <paramref name="endTimestamp"/> (0: now).
    /// </summary>
    public void Record(long startTimestamp, long bytes, bool ok, long headersTimestamp = 0, long endTimestamp = 0)
    {
        var elapsed = Math.Max(1, (endTimestamp > 0 ? endTimestamp : Stopwatch.GetTimestamp()) - startTimestamp);
        lock (_latency)
        {
            _latency.RecordValue(elapsed);
            if (headersTimestamp > 0)
            {
                _firstByte.RecordValue(Math.Max(1, headersTimestamp - startTimestamp));
            }
        }

        Interlocked.Add(ref _bytes, bytes);
        if (!ok)
        {
            Interlocked.Increment(ref _errors);
        }
    }

    /// <summary>Folds another run of the same mode into this one.</summary>
    public void Add(ModeStats other)
    {
        lock (_latency)
        {
            _latency.Add(other._latency);
            _firstByte.Add(other._firstByte);
        }

        Interlocked.Add(ref _errors, other.Errors);
        Interlocked.Add(ref _bytes, other.Bytes);
    }

    public double PercentileMs(double percentile)
    {
        lock (_latency)
        {
            return _latency.TotalCount == 0 ? 0 : _latency.GetValueAtPercentile(percentile) / OutputScalingFactor.TimeStampToMilliseconds;
        }
    }

    /// <summary>Time to the response headers (the first byte the client can act on), by percentile.</summary>
    public double FirstBytePercentileMs(double percentile)
    {
        lock (_latency)
        {
            return _firstByte.TotalCount == 0 ? 0 : _firstByte.GetValueAtPercentile(percentile) / OutputScalingFactor.TimeStampToMilliseconds;
        }
    }

    public long MeanBodyBytes => Count == 0 ? 0 : Bytes / Count;
}
