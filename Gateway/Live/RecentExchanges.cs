using System.Collections.Concurrent;
using System.Diagnostics;
using HdrHistogram;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.ServiceDefaults.Selection;
using Yarp.ReverseProxy.Model;

namespace Gateway.Live;

/// <summary>
/// The last minute of proxied exchanges, for the landing page: each one's route, the variant that served it
/// (from the <c>X-Perf-Variants</c> answer the Gateway relays), its duration and the bytes it moved.
/// Percentiles come from HdrHistogram, built per route and variant when the page asks.
/// </summary>
public sealed class RecentExchanges
{
    public static readonly TimeSpan Window = TimeSpan.FromMinutes(1);

    /// <summary>The landing page's charts split the window into this many slots (5 s each).</summary>
    public const int Slots = 12;

    // At most this many exchanges are kept (about 5 MB), whatever the rate.
    private const int MaxSamples = 100_000;

    private readonly ConcurrentQueue<Sample> _samples = new();

    private readonly record struct Sample(long Timestamp, string Route, string Path, string ServedBy, long Ticks, long Bytes);

    /// <summary>YARP pipeline step: times the whole exchange, the Gateway's own pitfall included.</summary>
    public async Task RecordAsync(HttpContext context, RequestDelegate next)
    {
        var started = Stopwatch.GetTimestamp();
        await next(context);
        var elapsed = Stopwatch.GetTimestamp() - started;
        var bytes = (context.Request.ContentLength ?? 0) + context.RequestServices.GetRequiredService<RequestVariants>().ResponseBytes;
        var route = context.GetReverseProxyFeature().Route.Config;
        Add(new Sample(started, route.RouteId, route.Match.Path ?? "", context.Response.Headers[PerfMode.VariantsHeader].ToString(), elapsed, bytes));
    }

    public IReadOnlyList<RouteWindow> Summarize()
    {
        var since = Stopwatch.GetTimestamp() - (long)(Window.TotalSeconds * Stopwatch.Frequency);
        return _samples.Where(s => s.Timestamp >= since)
            .GroupBy(s => (s.Route, Variant: PerfMode.Summarize(s.ServedBy)))
            .Select(g => Row(g.Key.Route, g.Key.Variant, [.. g], since))
            .OrderBy(r => r.Route, StringComparer.Ordinal).ThenBy(r => r.Variant, StringComparer.Ordinal)
            .ToList();
    }

    private static RouteWindow Row(string route, string variant, Sample[] samples, long since)
    {
        var histogram = new LongHistogram(TimeStamp.Minutes(10), 3);
        foreach (var sample in samples)
        {
            histogram.RecordValue(Math.Max(1, sample.Ticks));
        }

        double Ms(long ticks) => ticks * 1000.0 / Stopwatch.Frequency;
        var seconds = samples.Sum(s => s.Ticks) / (double)Stopwatch.Frequency;
        return new RouteWindow(
            route, samples[^1].Path, variant, samples[^1].ServedBy, samples.Length,
            Math.Round(Ms(histogram.GetValueAtPercentile(50)), 1),
            Math.Round(Ms(histogram.GetValueAtPercentile(99)), 1),
            Math.Round(samples.Sum(s => s.Bytes) / 1e6 / Math.Max(seconds, 1e-6), 1),
            MediansBySlot(samples, since));
    }

    /// <summary>The median duration (ms) of the samples that started in each slot of the window, oldest slot first.</summary>
    private static double?[] MediansBySlot(Sample[] samples, long since)
    {
        var slotTicks = (long)(Window.TotalSeconds * Stopwatch.Frequency) / Slots;
        var medians = new double?[Slots];
        foreach (var slot in samples.GroupBy(s => (int)Math.Min(Slots - 1, (s.Timestamp - since) / slotTicks)))
        {
            var ticks = slot.Select(s => s.Ticks).Order().ToArray();
            medians[slot.Key] = Math.Round(ticks[ticks.Length / 2] * 1000.0 / Stopwatch.Frequency, 1);
        }

        return medians;
    }

    private void Add(Sample sample)
    {
        _samples.Enqueue(sample);
        var expired = Stopwatch.GetTimestamp() - (long)(Window.TotalSeconds * Stopwatch.Frequency);
        while (_samples.TryPeek(out var oldest) && (oldest.Timestamp < expired || _samples.Count > MaxSamples))
        {
            _samples.TryDequeue(out _);
        }
    }
}
