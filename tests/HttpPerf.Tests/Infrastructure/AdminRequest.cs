using System.Net.Http.Json;

namespace HttpPerf.Tests.Infrastructure;

/// <summary>Requests to the Gateway's admin API (<c>/admin/flags</c>): its key in <c>X-Admin-Key</c>, a flag's variant as JSON.</summary>
internal static class AdminRequest
{
    public static HttpRequestMessage Admin(HttpMethod method, string path, string? key, string? variant = null)
    {
        var request = new HttpRequestMessage(method, path);
        if (key is not null)
        {
            request.Headers.Add("X-Admin-Key", key);
        }

        if (variant is not null)
        {
            request.Content = JsonContent.Create(variant);
        }

        return request;
    }
}
