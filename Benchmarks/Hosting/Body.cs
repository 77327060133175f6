namespace Benchmarks.Hosting;

public static class Body
{
    /// <summary>Reads a response body to its end with <paramref name="buffer"/> and returns its length.</summary>
    public static async Task<long> DrainAsync(HttpResponseMessage response, byte[] buffer)
    {
        response.EnsureSuccessStatusCode();
        await using var body = await response.Content.ReadAsStreamAsync();
        long total = 0;
        int read;
        while ((read = await body.ReadAsync(buffer)) > 0)
        {
            total += read;
        }

        return total;
    }
}
