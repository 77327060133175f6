using System.Diagnostics;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.ServiceDefaults.Telemetry;
using Microsoft.AspNetCore.Http.Features;
using Microsoft.AspNetCore.Http;
using Microsoft.FeatureManagement;

namespace HttpPerf.ServiceDefaults.Selection;

/// <summary>
/// Before the handler runs: resolves every pitfall flag of this service for this request (the forced
/// mode if the request carries one, else the flags file), so implementations can be chosen from DI
/// synchronously. When the response starts: writes <see cref="PerfMode.VariantsHeader"/>, tags the whole request's
/// mode and records the time to first byte. When the handler is done: records the pitfall's meters
/// (<see cref="PitfallMetrics"/>).
/// </summary>
internal sealed class PerfVariantsMiddleware(RequestDelegate next, PitfallFlags flags)
{
    private const string FileSource = "Microsoft.FeatureManagement";

    public async Task InvokeAsync(HttpContext context, RequestVariants variants, IVariantFeatureManagerSnapshot featureManager, IPerfModeGate gate)
    {
        if (!gate.MayForce(context))
        {
            Ignore(context.Request, context.Features.Get<IHttpActivityFeature>()?.Activity);
        }

        var forced = Forced(context.Request, out var invalidHeader);
        if (invalidHeader)
        {
            await Results.Problem(
                statusCode: StatusCodes.Status400BadRequest,
                title: $"Invalid {PerfMode.RequestHeader} header",
                detail: $"Use {PerfMode.Choices(PerfMode.All)}.").ExecuteAsync(context);
            return;
        }

        var started = System.Diagnostics.Stopwatch.GetTimestamp();
        var body = new CountingResponseBody(context.Features.GetRequiredFeature<IHttpResponseBodyFeature>());
        context.Features.Set<IHttpResponseBodyFeature>(body);
        var serverSpan = context.Features.Get<IHttpActivityFeature>()?.Activity;
        variants.Begin(context, body, serverSpan);
        if (forced is not null)
        {
            // Carried to every downstream hop as W3C baggage by HttpClient's and YARP's propagation.
            serverSpan?.SetBaggage(PerfMode.BaggageKey, forced);
        }

        foreach (var flag in flags.Names)
        {
            var variant = forced
                ?? PerfMode.OrOptimized((await featureManager.GetVariantAsync(flag, context.RequestAborted))?.Name);
            // A rung this flag does not have (streaming, on a two-rung pitfall) is served by its best one.
            variants.Resolve(flag, flags.Serving(flag, variant), forced is null ? FileSource : PerfMode.RequestHeader);
        }

        context.Response.OnStarting(static state =>
        {
            var (context, variants, started) = ((HttpContext, RequestVariants, long))state;
            var response = context.Response;
            // A proxied response already carries the hops behind it (YARP copied the header): keep them after ours.
            var served = variants.ToString();
            var behind = response.Headers[PerfMode.VariantsHeader].ToString();
            var all = string.Join(", ", new[] { served, behind }.Where(s => s.Length > 0));
            if (all.Length > 0)
            {
                response.Headers[PerfMode.VariantsHeader] = all;
            }

            variants.Complete(all);
            PitfallMetrics.RecordFirstByte(context, variants, started);

            return Task.CompletedTask;
        }, (context, variants, started));

        try
        {
            await next(context);
        }
        finally
        {
            PitfallMetrics.RecordEnd(context, variants, body);
            RuntimeCounters.AddResponse(body.Bytes, body.Flushes, served: variants.Own is not null);
            KeepControlRequestsOutOfRequestMetrics(context, variants);
        }
    }

    /// <summary>
    /// Request metrics are for the pitfalls: a request that no pitfall served and that succeeded (the admin API, the
    /// landing page's /live polling every 2 s and its files, /flags, OpenAPI) records no <c>http.server.request.duration</c>.
    /// Such a request carries no <c>perf.*</c> tag, and the dashboard lists a series without a tag as an
    /// <c>(Unset)</c> value in that tag's filter: one admin PUT from a dashboard command put "(Unset)" in every
    /// <c>perf.*</c> filter. Failures stay measured, tagged or not (a 429 from the proxy's limit, a bad mode header).
    /// Traces still show every request.
    /// </summary>
    private static void KeepControlRequestsOutOfRequestMetrics(HttpContext context, RequestVariants variants)
    {
        if (variants.Own is null && context.Response.StatusCode < StatusCodes.Status400BadRequest
            && context.Features.Get<IHttpMetricsTagsFeature>() is { } metrics)
        {
            metrics.MetricsDisabled = true;
        }
    }

    /// <summary>
    /// Drops what a client sent to force a mode, so neither this hop nor any hop behind it sees it: the header
    /// (YARP would forward it), and the baggage entry, from the server span (which the runtime's propagator
    /// injects downstream) and from OpenTelemetry's current baggage (which its HttpClient instrumentation injects).
    /// </summary>
    private static void Ignore(HttpRequest request, Activity? serverSpan)
    {
        request.Headers.Remove(PerfMode.RequestHeader);
        serverSpan?.SetBaggage(PerfMode.BaggageKey, null);
        OpenTelemetry.Baggage.RemoveBaggage(PerfMode.BaggageKey);
    }

    /// <summary>The mode forced for this request, from its header or from baggage set by an upstream hop.</summary>
    private static string? Forced(HttpRequest request, out bool invalidHeader)
    {
        invalidHeader = false;
        if (request.Headers.TryGetValue(PerfMode.RequestHeader, out var header))
        {
            var mode = header.ToString().Trim().ToLowerInvariant();
            invalidHeader = !PerfMode.IsValid(mode);
            return invalidHeader ? null : mode;
        }

        var baggage = Activity.Current?.GetBaggageItem(PerfMode.BaggageKey);
        return PerfMode.IsValid(baggage) ? baggage : null;
    }
}
