using System.Diagnostics;
using HttpPerf.ServiceDefaults.FlagSources;

namespace LoadGen.Load;

/// <summary>
/// Sends a bounded number of GETs at a fixed concurrency, alternating the modes given (header
/// <c>X-Perf-Mode</c>), each mode into its own histogram so both see the same machine state.
/// </summary>
public static class LoadRunner
{
    /// <summary>A "mode" that sends no <c>X-Perf-Mode</c> header: the flags file decides.</summary>
    public const string FlagsFile = ModeControl.FollowFlags;

    public static Task<IReadOnlyList<ModeStats>> RunAsync(
        HttpClient client, string path, IReadOnlyList<string> modes, int requests, int concurrency, CancellationToken cancellationToken, int readBufferSize = 64 * 1024) =>
        RunAsync(client, i => (modes[(int)(i % modes.Count)], Get(path, modes[(int)(i % modes.Count)])), requests, concurrency, cancellationToken, readBufferSize, modes);

    /// <summary>Sends <paramref name="requests"/> requests from <paramref name="nextRequest"/>, keyed as it says.</summary>
    public static async Task<IReadOnlyList<ModeStats>> RunAsync(
        HttpClient client, Func<long, (string Key, HttpRequestMessage Request)> nextRequest, int requests, int concurrency,
        CancellationToken cancellationToken, int readBufferSize = 64 * 1024, IReadOnlyList<string>? keysInOrder = null)
    {
        var stats = new System.Collections.Concurrent.ConcurrentDictionary<string, ModeStats>();
        foreach (var key in keysInOrder ?? [])
        {
            stats[key] = new ModeStats(key);
        }

        var next = -1L;
        var workers = Enumerable.Range(0, concurrency).Select(async _ =>
        {
            var buffer = new byte[readBufferSize];
            long i;
            while ((i = Interlocked.Increment(ref next)) < requests)
            {
                var (key, request) = nextRequest(i);
                var keyStats = stats.GetOrAdd(key, k => new ModeStats(k));
                var started = Stopwatch.GetTimestamp();
                var outcome = await Exchange.SendAsync(client, request, buffer, cancellationToken);
                keyStats.Record(started, outcome);
            }
        });
        await Task.WhenAll(workers);
        return keysInOrder is null ? stats.Values.OrderBy(s => s.Mode, StringComparer.Ordinal).ToList() : keysInOrder.Select(k => stats[k]).ToList();
    }

    private static HttpRequestMessage Get(string path, string mode)
    {
        var request = new HttpRequestMessage(HttpMethod.Get, path);
        if (mode != FlagsFile)
        {
            request.Headers.Add("X-Perf-Mode", mode);
        }

        return request;
    }
}
