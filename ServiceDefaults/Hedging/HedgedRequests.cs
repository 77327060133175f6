namespace HttpPerf.ServiceDefaults.Hedging;

/// <summary>
/// Which requests may be hedged, and the second message a hedge sends. Frontend.Api's Catalog client and the
/// Gateway's routes both use them. Their page: docs/pitfalls/Frontend.Replicas.md.
/// </summary>
public static class HedgedRequests
{
    /// <summary>
    /// Only a request that is safe to send twice is hedged: a GET or HEAD, which has no body to send again. Any other
    /// waits for its one attempt.
    /// </summary>
    public static bool IsSafe(HttpRequestMessage request) =>
        (request.Method == HttpMethod.Get || request.Method == HttpMethod.Head) && request.Content is null;

    /// <summary>
    /// A second message for the same GET: a message is sent once. Its options (the routing's record of the replicas
    /// this call has tried, the telemetry's) are the primary's, so every attempt of the call shares them.
    /// </summary>
    public static HttpRequestMessage Copy(HttpRequestMessage primary)
    {
        var copy = new HttpRequestMessage(primary.Method, primary.RequestUri) { Version = primary.Version, VersionPolicy = primary.VersionPolicy };
        foreach (var header in primary.Headers)
        {
            copy.Headers.TryAddWithoutValidation(header.Key, header.Value);
        }

        foreach (var option in primary.Options)
        {
            ((IDictionary<string, object?>)copy.Options)[option.Key] = option.Value;
        }

        return copy;
    }
}
