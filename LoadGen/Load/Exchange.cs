using System.Diagnostics;
using HttpPerf.ServiceDefaults.Flags;

namespace LoadGen.Load;

/// <summary>One request as both runners send it: headers first, then the body drained with the caller's buffer.</summary>
public static class Exchange
{
    /// <summary>What came back: body bytes, when the headers arrived (0 if they never did), success, and the <c>X-Perf-Variants</c> that served it.</summary>
    public readonly record struct Outcome(long Bytes, long HeadersTimestamp, bool Ok, string Variants = "");

    public static async Task<Outcome> SendAsync(HttpClient client, HttpRequestMessage request, byte[] buffer, CancellationToken cancellationToken)
    {
        long bytes = 0;
        long headers = 0;
        try
        {
            using (request)
            using (var response = await client.SendAsync(request, HttpCompletionOption.ResponseHeadersRead, cancellationToken))
            {
                headers = Stopwatch.GetTimestamp();
                await using var body = await response.Content.ReadAsStreamAsync(cancellationToken);
                int read;
                while ((read = await body.ReadAsync(buffer, cancellationToken)) > 0)
                {
                    bytes += read;
                }

                var variants = response.Headers.TryGetValues(PerfMode.VariantsHeader, out var values) ? string.Join(", ", values) : "";
                return new Outcome(bytes, headers, response.IsSuccessStatusCode, variants);
            }
        }
        catch (Exception exception) when (exception is HttpRequestException or IOException or TaskCanceledException && !cancellationToken.IsCancellationRequested)
        {
            // A refused connection, a cut body or a client time-out: an error to count, not a reason to stop.
            return new Outcome(bytes, headers, Ok: false);
        }
    }
}
