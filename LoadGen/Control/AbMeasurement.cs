using HttpPerf.Measurement;
using System.Diagnostics;
using System.Text;
using HttpPerf.ServiceDefaults.Contract;
using LoadGen.Load;
using Microsoft.Extensions.Logging;
using OpenTelemetry;
using static System.FormattableString;

namespace LoadGen.Control;

/// <summary>
/// "A/B: measure now": a short run beside the live load, which it neither stops nor slows down. For each scenario in
/// turn, one request at a time, naive and optimized alternate by <c>X-Perf-Mode</c> header, so both see the same
/// machine and the same live load; each mode's latency goes into its own HdrHistogram. Bounded in time (each scenario
/// gets its share of <see cref="Total"/>, the product list and the catalog, the headline figures, twice the others',
/// at most <see cref="PerScenario"/>, and at most <see cref="MaxPairs"/> pairs; what is still in flight at
/// <see cref="HardLimit"/> is cancelled) and in load (one request in flight). Each scenario first sends
/// <see cref="WarmUpPairs"/> pairs it does not count: the live load follows the flags, so the other mode's code is
/// still tier-0, and the first A/B 60 s after LoadGen's start said 0.12 for the product list where the next two said
/// 0.19. Each ratio comes with its halves, the ratio of the first half of the pairs and of the second: where they
/// differ by more than <see cref="SettledWithin"/>, the figure is still moving and the answer says it has not settled.
/// </summary>
public sealed partial class AbMeasurement(HttpClient gateway, DownloadFile download)
{
    public static readonly TimeSpan Total = TimeSpan.FromSeconds(48);
    public static readonly TimeSpan PerScenario = TimeSpan.FromSeconds(12);
    public static readonly TimeSpan HardLimit = TimeSpan.FromSeconds(55);
    public const int MaxPairs = 300;

    /// <summary>Pairs sent and not counted before each scenario's figures.</summary>
    public const int WarmUpPairs = 2;

    /// <summary>How far apart the halves' ratios may be for a figure to count as settled.</summary>
    public const double SettledWithin = 0.15;

    /// <summary>The scenarios a measurement covers when none is named: every pitfall, through its route.</summary>
    public static IReadOnlyList<string> Scenarios => Scenario.Known;

    private readonly SemaphoreSlim _one = new(1, 1);

    public bool IsMeasuring => _one.CurrentCount == 0;

    /// <summary>
    /// One scenario's figures in one mode: the request count they rest on, errors, bytes moved per second busy, and the
    /// p50 of the first and of the second half of the pairs' requests (the halves).
    /// </summary>
    public sealed record Side(long Requests, long Errors, long ServedOtherwise, double? P50Ms, double? P99Ms, double? MegabytesPerSecond,
        double? FirstHalfP50Ms = null, double? SecondHalfP50Ms = null, IReadOnlyDictionary<string, long>? Failures = null)
    {
        /// <summary>What was not counted, and why: <c>12 × 503 Out of memory</c>; empty when everything counted.</summary>
        public string NotCounted()
        {
            var why = (Failures ?? new Dictionary<string, long> { ["failed"] = Errors }).Where(f => f.Value > 0).OrderByDescending(f => f.Value)
                .Select(f => Invariant($"{f.Value:N0} × {f.Key}")).ToList();
            if (ServedOtherwise > 0)
            {
                why.Add(Invariant($"{ServedOtherwise:N0} served in another mode"));
            }

            return why.Count == 0 ? "" : (Requests == 0 ? "none counted: " : "") + string.Join(", ", why);
        }
    }

    /// <summary>A scenario's figures in each mode; or, where it could not be measured, why (<paramref name="NotMeasured"/>).</summary>
    public sealed record Row(string Scenario, string Route, Side Naive, Side Optimized, string? NotMeasured = null)
    {
        /// <summary>Whether the halves' p50 ratios, optimized / naive, are within <see cref="SettledWithin"/> of each other.</summary>
        public bool Settled =>
            Optimized.FirstHalfP50Ms / Naive.FirstHalfP50Ms is { } first && Optimized.SecondHalfP50Ms / Naive.SecondHalfP50Ms is { } second
            && Math.Abs(first - second) <= SettledWithin * Math.Max(first, second);
    }

    public sealed record Result(IReadOnlyList<Row> Rows, TimeSpan Elapsed);

    /// <summary>Whether the Gateway says it is healthy (<c>/health</c> answers 2xx); the reason when not.</summary>
    public async Task<string?> WhyNotHealthyAsync(CancellationToken cancellationToken)
    {
        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        timeout.CancelAfter(TimeSpan.FromSeconds(5));
        try
        {
            // A probe, not a step of the measurement: no span of it, as of YARP's health checks, reaches the dashboard.
            using var probe = SuppressInstrumentationScope.Begin();
            using var response = await gateway.GetAsync(SystemContract.HealthPath, timeout.Token);
            return response.IsSuccessStatusCode
                ? null
                : $"The Gateway at {gateway.BaseAddress} answered {(int)response.StatusCode} on /health: {await response.Content.ReadAsStringAsync(timeout.Token)}";
        }
        catch (Exception exception) when (exception is HttpRequestException or OperationCanceledException && !cancellationToken.IsCancellationRequested)
        {
            return $"The Gateway at {gateway.BaseAddress} did not answer on /health: {exception.Message}";
        }
    }

    /// <summary>Measures <paramref name="scenarios"/>; null when a measurement is already running.</summary>
    public async Task<Result?> TryMeasureAsync(IReadOnlyList<string> scenarios, CancellationToken cancellationToken)
    {
        if (!await _one.WaitAsync(0, cancellationToken))
        {
            return null;
        }

        try
        {
            using var limit = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
            limit.CancelAfter(HardLimit);
            var clock = Stopwatch.StartNew();
            var weights = scenarios.Sum(Weight);
            var rows = new List<Row>();
            foreach (var name in scenarios)
            {
                var budget = TimeSpan.FromTicks(Math.Min(PerScenario.Ticks, Total.Ticks * Weight(name) / weights));
                if (limit.IsCancellationRequested)
                {
                    rows.Add(NotMeasured(name, Invariant($"the {HardLimit.TotalSeconds:0} s budget ran out before it")));
                    continue;
                }

                try
                {
                    rows.Add(await MeasureAsync(name, budget, limit.Token));
                }
                catch (Exception exception) when (!cancellationToken.IsCancellationRequested && exception is not OutOfMemoryException)
                {
                    // A scenario that cannot prepare (its download's upload refused, the Gateway gone) ends its own
                    // row; the rows measured stay, and the next scenario is tried.
                    rows.Add(NotMeasured(name, limit.IsCancellationRequested
                        ? Invariant($"the {HardLimit.TotalSeconds:0} s budget ran out while it prepared")
                        : $"could not prepare: {exception.GetType().Name}: {exception.Message}"));
                }
            }

            return new Result(rows, clock.Elapsed);
        }
        finally
        {
            _one.Release();
        }
    }

    private static Row NotMeasured(string scenario, string why)
    {
        var none = new Side(0, 0, 0, null, null, null);
        return new Row(scenario, "", none, none, why);
    }

    // The product list and the catalog are the headline figures (the README's, the dashboard story's): twice the time.
    private static int Weight(string scenario) => scenario is "products" or "catalog" ? 2 : 1;

    private async Task<Row> MeasureAsync(string name, TimeSpan budget, CancellationToken cancellationToken)
    {
        // Each request a trace of its own, as the live load's are, not a child of POST /measure: one trace of every
        // request of a measurement held thousands of spans, past what the dashboard's trace page lists. The
        // AbMeasured record's Trace link opens POST /measure itself. (An async method's change of Activity.Current
        // ends with it.)
        Activity.Current = null;
        var load = Scenario.Parse(name, new ModeControl([ModeControl.Both]), download.Size);
        await load.PrepareAsync(download, cancellationToken);
        var sides = new Dictionary<string, Tally> { [PerfMode.Naive] = new(PerfMode.Naive), [PerfMode.Optimized] = new(PerfMode.Optimized) };
        var buffer = new byte[64 * 1024];
        var route = "";
        var clock = Stopwatch.StartNew();
        var pairs = new List<(long Started, string Mode, long Sent, Exchange.Outcome Outcome)>();
        for (long i = -2 * WarmUpPairs; !cancellationToken.IsCancellationRequested; i++)
        {
            // Whole pairs only, so both modes rest on as many requests; at least one pair.
            if (i % 2 == 0 && i >= 2 && (clock.Elapsed >= budget || i >= 2 * MaxPairs))
            {
                break;
            }

            var (_, request) = load.Next(Math.Max(i, 0));
            var mode = i % 2 == 0 ? PerfMode.Naive : PerfMode.Optimized;
            route = $"{request.Method} {Exchange.RouteOf(request)}";
            // An upload's body is generated as it is sent, with no Content-Length: count the file it carries.
            var sent = request.Content is null ? 0 : request.Content.Headers.ContentLength ?? download.Size;
            var started = Stopwatch.GetTimestamp();
            Exchange.Outcome outcome;
            try
            {
                outcome = await Exchange.SendAsync(gateway, request, buffer, cancellationToken);
            }
            catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
            {
                break;
            }

            if (i >= 0)
            {
                pairs.Add((started, mode, sent, outcome));
            }
        }

        if (pairs.Count == 0)
        {
            // Every request it sent was a warm-up, or still in flight when the measurement's limit ended it.
            return NotMeasured(name, Invariant($"no request past its warm-up finished within the {HardLimit.TotalSeconds:0} s budget"));
        }

        for (var i = 0; i < pairs.Count; i++)
        {
            sides[pairs[i].Mode].Add(pairs[i].Started, pairs[i].Sent, pairs[i].Outcome, firstHalf: i / 2 < (pairs.Count / 2 + 1) / 2);
        }

        return new Row(name, route, sides[PerfMode.Naive].Side(), sides[PerfMode.Optimized].Side());
    }

    /// <summary>
    /// One record per measurement, beside the flag changes in the audit category (<c>HttpPerf.Audit</c>, event
    /// <c>AbMeasured</c>): the scenarios and their headline ratios, optimized / naive, p50 and MB/s.
    /// </summary>
    public static void Log(ILogger audit, Result result) => LogMeasured(
        audit,
        string.Join(", ", result.Rows.Select(r => r.Scenario)),
        Math.Round(result.Elapsed.TotalSeconds, 1),
        string.Join(", ", result.Rows.Select(r => Invariant($"{r.Scenario} {Figures.Ratio(r.Optimized.P50Ms, r.Naive.P50Ms)}"))),
        string.Join(", ", result.Rows.Select(r => Invariant($"{r.Scenario} {Figures.Ratio(r.Optimized.MegabytesPerSecond, r.Naive.MegabytesPerSecond)}"))),
        result.Rows.Sum(r => r.Naive.Errors + r.Optimized.Errors));

    [LoggerMessage(EventId = 2, EventName = "AbMeasured", Level = LogLevel.Information,
        Message = "A/B measured {Scenarios} in {Seconds} s: p50 optimized / naive {P50Ratios}; MB/s optimized / naive {ThroughputRatios}; {Errors} errors")]
    private static partial void LogMeasured(ILogger logger, string scenarios, double seconds, string p50Ratios, string throughputRatios, long errors);

    /// <summary>The result as a Markdown table: a row per scenario and mode, the optimized one with its ratios to naive.</summary>
    public static string Markdown(Result result)
    {
        var md = new StringBuilder();
        md.AppendLine(Invariant($"A/B by X-Perf-Mode header, one request in flight beside the live load, naive and optimized alternating; {result.Elapsed.TotalSeconds:0.0} s."));
        md.AppendLine();
        md.AppendLine("| route | mode | requests | p50 ms | p99 ms | MB/s | p50 optimized / naive | its halves | MB/s optimized / naive | not counted |");
        md.AppendLine("|---|---|---:|---:|---:|---:|---:|---:|---:|---|");
        foreach (var row in result.Rows)
        {
            if (row.NotMeasured is { } why)
            {
                md.AppendLine(Invariant($"| {row.Scenario} | – | 0 | | | | – | | – | not measured: {why} |"));
                continue;
            }

            var (naive, optimized) = (row.Naive, row.Optimized);
            md.AppendLine(Invariant($"| {row.Scenario} {row.Route} | naive | {Figures.Count(naive.Requests)} | {Figures.Ms(naive.P50Ms)} | {Figures.Ms(naive.P99Ms)} | {Figures.Number(naive.MegabytesPerSecond)} | | | | {naive.NotCounted()} |"));
            md.AppendLine(Invariant($"| | optimized | {Figures.Count(optimized.Requests)} | {Figures.Ms(optimized.P50Ms)} | {Figures.Ms(optimized.P99Ms)} | {Figures.Number(optimized.MegabytesPerSecond)} | {Figures.Ratio(optimized.P50Ms, naive.P50Ms)} | {Figures.Ratio(optimized.FirstHalfP50Ms, naive.FirstHalfP50Ms)}, {Figures.Ratio(optimized.SecondHalfP50Ms, naive.SecondHalfP50Ms)} | {Figures.Ratio(optimized.MegabytesPerSecond, naive.MegabytesPerSecond)} | {optimized.NotCounted()} |"));
        }

        var moving = result.Rows.Where(r => r.NotMeasured is null && r.Naive.Requests > 0 && r.Optimized.Requests > 0 && !r.Settled).Select(r => r.Scenario).ToList();
        if (moving.Count > 0)
        {
            md.AppendLine();
            md.AppendLine(Invariant($"Not settled: {string.Join(", ", moving)}. The first and the second half of the pairs differ by more than {SettledWithin * 100:0}%: too few requests for that precision, or a figure still moving (code still compiling, a load that changed). Measure again."));
        }

        if (result.Rows.Any(r => r.Naive.ServedOtherwise + r.Optimized.ServedOtherwise > 0))
        {
            md.AppendLine();
            md.AppendLine("Served in another mode than asked: the Gateway drops X-Perf-Mode unless Gateway:AllowModeOverride is true.");
        }

        return md.ToString();
    }

    /// <summary>One mode's requests in one scenario: only those served in that mode count in the figures.</summary>
    private sealed class Tally(string mode)
    {
        private readonly ModeStats _stats = new("");
        private readonly ModeStats _first = new("");
        private readonly ModeStats _second = new("");
        private long _busyTicks;
        private long _errors;
        private long _servedOtherwise;
        private readonly Dictionary<string, long> _failures = [];

        public void Add(long started, long sentBytes, Exchange.Outcome outcome, bool firstHalf)
        {
            if (!outcome.Ok)
            {
                _errors++;
                var why = outcome.Failure ?? "failed";
                _failures[why] = _failures.GetValueOrDefault(why) + 1;
            }
            else if (PerfMode.Summarize(outcome.Variants) != mode)
            {
                _servedOtherwise++;
            }
            else
            {
                _busyTicks += outcome.EndTimestamp - started;
                _stats.Record(started, sentBytes + outcome.Bytes, ok: true, outcome.HeadersTimestamp, outcome.EndTimestamp);
                (firstHalf ? _first : _second).Record(started, sentBytes + outcome.Bytes, ok: true, outcome.HeadersTimestamp, outcome.EndTimestamp);
            }
        }

        public Side Side()
        {
            if (_stats.Count == 0)
            {
                return new Side(0, _errors, _servedOtherwise, null, null, null, Failures: _failures);
            }

            var seconds = _busyTicks / (double)Stopwatch.Frequency;
            return new Side(_stats.Count, _errors, _servedOtherwise, _stats.PercentileMs(50), _stats.PercentileMs(99), _stats.Bytes / 1e6 / Math.Max(seconds, 1e-6),
                _first.Count > 0 ? _first.PercentileMs(50) : null, _second.Count > 0 ? _second.PercentileMs(50) : null, _failures);
        }
    }
}
