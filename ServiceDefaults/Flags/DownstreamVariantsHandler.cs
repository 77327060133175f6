using Microsoft.AspNetCore.Http;

namespace HttpPerf.ServiceDefaults.Flags;

/// <summary>
/// On every outgoing HttpClient call: folds the downstream hop's <see cref="PerfMode.VariantsHeader"/>
/// into the current request's variants, so the caller's response lists every hop that served it.
/// </summary>
internal sealed class DownstreamVariantsHandler(IHttpContextAccessor accessor) : DelegatingHandler
{
    protected override async Task<HttpResponseMessage> SendAsync(HttpRequestMessage request, CancellationToken cancellationToken)
    {
        var response = await base.SendAsync(request, cancellationToken);
        if (response.Headers.TryGetValues(PerfMode.VariantsHeader, out var values))
        {
            RequestVariants.Of(accessor.HttpContext)?.AddDownstream(values);
        }

        return response;
    }
}
