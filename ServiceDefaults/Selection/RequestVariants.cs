using System.Diagnostics;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.ServiceDefaults.Telemetry;
using Microsoft.AspNetCore.Http.Features;
using Microsoft.AspNetCore.Http;

namespace HttpPerf.ServiceDefaults.Selection;

/// <summary>
/// Per request: the variant each pitfall flag resolved to (decided once, before the handler runs), and
/// the <c>flag=variant</c> pairs that actually served it, this hop first, then what downstream hops reported.
/// </summary>
public sealed class RequestVariants
{
    private readonly Dictionary<string, (string Variant, string Source)> _resolved = new(StringComparer.Ordinal);
    private readonly List<string> _served = [];
    private Activity? _serverSpan;
    private IHttpMetricsTagsFeature? _metricsTags;
    private CountingResponseBody? _body;
    private long _bufferedInMemory;
    private long _bufferedInTempFile;

    internal void Begin(HttpContext context, CountingResponseBody body, Activity? serverSpan)
    {
        _body = body;
        _serverSpan = serverSpan;
        _metricsTags = context.Features.Get<IHttpMetricsTagsFeature>();
    }

    internal void Resolve(string flag, string variant, string source) => _resolved[flag] = (variant, source);

    /// <summary>
    /// The first pitfall this hop served for the request (its route's own), and its variant; null when none
    /// did (health, admin). Request metrics are tagged with it, and only it, to keep their cardinality low.
    /// </summary>
    public (string Flag, string Variant)? Own { get; private set; }

    /// <summary>
    /// The mode of the whole request (<see cref="PerfMode.Summarize"/> of every hop's variant, this one's and those
    /// behind it), known once the response starts; null before, or when no pitfall served the request.
    /// </summary>
    public string? Mode { get; private set; }

    /// <summary>Body bytes this request held whole in memory, as the serving implementation reported them.</summary>
    public long BufferedInMemory => Interlocked.Read(ref _bufferedInMemory);

    /// <summary>Body bytes this request spooled to a temp file, as the serving implementation reported them.</summary>
    public long BufferedInTempFile => Interlocked.Read(ref _bufferedInTempFile);

    /// <summary>Response body bytes this hop has written so far.</summary>
    public long ResponseBytes => _body?.Bytes ?? 0;

    /// <summary>A naive implementation reports the whole-body buffers it made: what the <c>httpperf.server.request.buffered</c> meter shows.</summary>
    public void Buffered(long inMemory, long inTempFile = 0)
    {
        Interlocked.Add(ref _bufferedInMemory, inMemory);
        Interlocked.Add(ref _bufferedInTempFile, inTempFile);
    }

    /// <summary>Every flag of this service and the variant it resolved to for this request.</summary>
    public IReadOnlyDictionary<string, string> Resolved => _resolved.ToDictionary(r => r.Key, r => r.Value.Variant);

    /// <summary>The variant <paramref name="flag"/> resolved to for this request (for metric tags).</summary>
    public string VariantOf(string flag) => _resolved.TryGetValue(flag, out var resolved) ? resolved.Variant : PerfMode.Optimized;

    /// <summary>Returns the variant that serves <paramref name="flag"/> and records that it did.</summary>
    public string Serve(string flag)
    {
        var (variant, source) = _resolved.GetValueOrDefault(flag, (PerfMode.Optimized, "default"));
        lock (_served)
        {
            _served.Add($"{flag}={variant}");
            if (Own is null)
            {
                Own = (flag, variant);
                // ASP.NET Core's http.server.request.duration carries these tags when the request ends.
                _metricsTags?.Tags.Add(new(PerfTelemetry.FlagTag, flag));
                _metricsTags?.Tags.Add(new(PerfTelemetry.VariantTag, variant));
            }
        }

        // OpenTelemetry semantic conventions for feature flags: one evaluation event per flag.
        _serverSpan?.AddEvent(new ActivityEvent("feature_flag.evaluation", tags: new ActivityTagsCollection
        {
            ["feature_flag.key"] = flag,
            ["feature_flag.result.variant"] = variant,
            ["feature_flag.provider.name"] = source,
        }));
        _serverSpan?.SetTag(PerfTelemetry.VariantsTag, ToString());
        return variant;
    }

    /// <summary>Adds the pairs a downstream hop reported in its <see cref="PerfMode.VariantsHeader"/>.</summary>
    public void AddDownstream(IEnumerable<string> headerValues)
    {
        lock (_served)
        {
            foreach (var value in headerValues)
            {
                _served.AddRange(value.Split(',', StringSplitOptions.TrimEntries | StringSplitOptions.RemoveEmptyEntries));
            }
        }

        _serverSpan?.SetTag(PerfTelemetry.VariantsTag, ToString());
    }

    /// <summary>
    /// When the response starts: <paramref name="allHops"/> is the <see cref="PerfMode.VariantsHeader"/> the caller
    /// gets. Tags the request metrics and the server span with the whole request's mode: upstream hops (Gateway,
    /// Frontend.Api) only serve their own flag, so without it their latency step has no name when a hop behind
    /// them goes naive. Bounded: a variant's name or <c>mixed</c>.
    /// </summary>
    internal void Complete(string allHops)
    {
        if (allHops.Length == 0)
        {
            return;
        }

        Mode = PerfMode.Summarize(allHops);
        _metricsTags?.Tags.Add(new(PerfTelemetry.ModeTag, Mode));
        _serverSpan?.SetTag(PerfTelemetry.ModeTag, Mode);
    }

    public override string ToString()
    {
        lock (_served)
        {
            return string.Join(", ", _served);
        }
    }

    internal static RequestVariants? Of(HttpContext? context) =>
        context?.RequestServices.GetService(typeof(RequestVariants)) as RequestVariants;
}
