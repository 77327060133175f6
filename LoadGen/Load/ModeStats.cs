using System.Diagnostics;
using HdrHistogram;

namespace LoadGen.Load;

/// <summary>Latency (HdrHistogram, 3 significant digits), errors and bytes for one mode.</summary>
public sealed class ModeStats(string mode)
{
    private readonly LongHistogram _latency = new(TimeStamp.Minutes(10), 3);
    private readonly LongHistogram _firstByte = new(TimeStamp.Minutes(10), 3);
    private long _errors;
    private long _bytes;

    public string Mode { get; } = mode;

    public long Count => _latency.TotalCount;

    public long Errors => Interlocked.Read(ref _errors);

    public long Bytes => Interlocked.Read(ref _bytes);

    /// <summary>Records one request: started at <paramref name="startTimestamp"/>, headers at <paramref name="headersTimestamp"/> (0: none).</summary>
    public void Record(long startTimestamp, long bytes, bool ok, long headersTimestamp = 0)
    {
        var elapsed = Math.Max(1, Stopwatch.GetTimestamp() - startTimestamp);
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
