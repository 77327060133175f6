using System.Net.Http.Json;
using System.Security.Cryptography;
using System.Text.Json;

namespace HttpPerf.Tests.Infrastructure;

/// <summary>Request helpers the tests share: a GET in a forced mode, and what came back.</summary>
public static class Http
{
    public const string ModeHeader = "X-Perf-Mode";
    public const string VariantsHeader = "X-Perf-Variants";

    public static async Task<Fetched> GetAsync(HttpClient client, string path, string? mode = null)
    {
        using var request = new HttpRequestMessage(HttpMethod.Get, path);
        if (mode is not null)
        {
            request.Headers.Add(ModeHeader, mode);
        }

        using var response = await client.SendAsync(request, TestContext.Current.CancellationToken);
        var body = await response.Content.ReadAsByteArrayAsync(TestContext.Current.CancellationToken);
        var variants = response.Headers.TryGetValues(VariantsHeader, out var values) ? string.Join(", ", values) : "";
        return new Fetched((int)response.StatusCode, response.Content.Headers.ContentType?.MediaType, variants, body);
    }

    /// <summary>The same GET forced naive, then optimized; both must succeed.</summary>
    public static async Task<(Fetched Naive, Fetched Optimized)> GetInBothModesAsync(HttpClient client, string path)
    {
        var naive = await GetAsync(client, path, "naive");
        var optimized = await GetAsync(client, path, "optimized");
        Assert.Equal(200, naive.Status);
        Assert.Equal(200, optimized.Status);
        return (naive, optimized);
    }

    /// <summary>
    /// GETs <paramref name="path"/> until <c>X-Perf-Variants</c> contains <paramref name="variant"/> (a flag just
    /// written is served within a second or two: each service watches the flags file, and a busy machine delays the
    /// change notice), or until a GET sent 10 s or more after the first does not; returns the last header seen.
    /// </summary>
    public static async Task<string> GetUntilServedAsync(HttpClient client, string path, string variant)
    {
        var clock = System.Diagnostics.Stopwatch.StartNew();
        while (true)
        {
            var sent = clock.Elapsed;
            var served = (await GetAsync(client, path)).Variants;
            if (served.Contains(variant, StringComparison.Ordinal) || sent >= TimeSpan.FromSeconds(10))
            {
                return served;
            }

            await Task.Delay(100, TestContext.Current.CancellationToken);
        }
    }

    public sealed record Fetched(int Status, string? MediaType, string Variants, byte[] Body)
    {
        public string Sha256 => Convert.ToHexStringLower(SHA256.HashData(Body));

        public T Json<T>() => JsonSerializer.Deserialize<T>(Body, JsonSerializerOptions.Web)!;

        public ProblemDocument Problem() => Json<ProblemDocument>();
    }

    public sealed record ProblemDocument(string? Type, string? Title, int? Status, string? Detail);

    public static Task<HttpResponseMessage> PostJsonAsync<T>(HttpClient client, string path, T value) =>
        client.PostAsJsonAsync(path, value, TestContext.Current.CancellationToken);
}
