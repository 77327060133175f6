using System.Diagnostics;

namespace LoadGen.Load;

/// <summary>One request as both runners send it: headers first, then the body drained with the caller's buffer.</summary>
internal static class Exchange
{
    /// <summary>What came back: body bytes, when the headers arrived (0 if they never did), and success.</summary>
    public readonly record struct Outcome(long Bytes, long HeadersTimestamp, bool Ok);

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

                return new Outcome(bytes, headers, response.IsSuccessStatusCode);
            }
        }
        catch (Exception exception) when (exception is HttpRequestException or IOException or TaskCanceledException && !cancellationToken.IsCancellationRequested)
        {
            // A refused connection, a cut body or a client time-out: an error to count, not a reason to stop.
            return new Outcome(bytes, headers, Ok: false);
        }
    }
}
