using System.Diagnostics;

namespace LoadGen.Load;

/// <summary>
/// Sends a bounded number of GETs at a fixed concurrency, alternating the modes given (header
/// <c>X-Perf-Mode</c>), each mode into its own histogram so both see the same machine state.
/// </summary>
public static class LoadRunner
{
    /// <summary>A "mode" that sends no <c>X-Perf-Mode</c> header: the flags file decides.</summary>
    public const string FlagsFile = "flags file";

    public static async Task<IReadOnlyList<ModeStats>> RunAsync(
        HttpClient client, string path, IReadOnlyList<string> modes, int requests, int concurrency, CancellationToken cancellationToken, int readBufferSize = 64 * 1024)
    {
        var stats = modes.Select(m => new ModeStats(m)).ToArray();
        var next = -1;
        var workers = Enumerable.Range(0, concurrency).Select(async _ =>
        {
            var buffer = new byte[readBufferSize];
            int i;
            while ((i = Interlocked.Increment(ref next)) < requests)
            {
                var mode = stats[i % stats.Length];
                var started = Stopwatch.GetTimestamp();
                long bytes = 0;
                var ok = false;
                try
                {
                    using var request = new HttpRequestMessage(HttpMethod.Get, path);
                    if (mode.Mode != FlagsFile)
                    {
                        request.Headers.Add("X-Perf-Mode", mode.Mode);
                    }

                    using var response = await client.SendAsync(request, HttpCompletionOption.ResponseHeadersRead, cancellationToken);
                    await using var body = await response.Content.ReadAsStreamAsync(cancellationToken);
                    int read;
                    while ((read = await body.ReadAsync(buffer, cancellationToken)) > 0)
                    {
                        bytes += read;
                    }

                    ok = response.IsSuccessStatusCode;
                }
                catch (HttpRequestException)
                {
                }
                catch (IOException)
                {
                }

                mode.Record(started, bytes, ok);
            }
        });
        await Task.WhenAll(workers);
        return stats;
    }
}
