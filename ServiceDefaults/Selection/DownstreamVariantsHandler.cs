using System.Net.Http.Metrics;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.ServiceDefaults.Telemetry;
using Microsoft.AspNetCore.Http;

namespace HttpPerf.ServiceDefaults.Selection;

/// <summary>
/// On every outgoing HttpClient call: tags the call's <c>http.client.request.duration</c> with the pitfall
/// the current request is served by and the mode of this hop and the hops it reached (so Frontend.Api's Catalog
/// calls split by variant and mode on the dashboard), and folds the downstream hop's
/// <see cref="PerfMode.VariantsHeader"/> into the current request's variants, so the caller's response lists every
/// hop that served it.
/// </summary>
internal sealed class DownstreamVariantsHandler(IHttpContextAccessor accessor) : DelegatingHandler
{
    // The resilience handler sends the same message again on a retry: tag it once.
    private static readonly HttpRequestOptionsKey<bool> Tagged = new("perf.tagged");

    protected override async Task<HttpResponseMessage> SendAsync(HttpRequestMessage request, CancellationToken cancellationToken)
    {
        var variants = RequestVariants.Of(accessor.HttpContext);
        if (variants?.Own is { } own && !request.Options.TryGetValue(Tagged, out _))
        {
            request.Options.Set(Tagged, true);
            HttpMetricsEnrichmentContext.AddCallback(request, context =>
            {
                context.AddCustomTag(PerfTelemetry.FlagTag, own.Flag);
                context.AddCustomTag(PerfTelemetry.VariantTag, own.Variant);
                // The mode of this hop and every hop behind it, as the server request's perf.mode.
                if (context.Response?.Headers.TryGetValues(PerfMode.VariantsHeader, out var behind) == true)
                {
                    context.AddCustomTag(PerfTelemetry.ModeTag, PerfMode.Summarize(string.Join(", ", [$"{own.Flag}={own.Variant}", .. behind])));
                }
            });
        }

        var response = await base.SendAsync(request, cancellationToken);
        if (response.Headers.TryGetValues(PerfMode.VariantsHeader, out var values))
        {
            variants?.AddDownstream(values);
        }

        return response;
    }
}
