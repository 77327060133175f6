using System.Net.Http.Json;
using System.Text.Json;
using BenchmarkDotNet.Attributes;
using Benchmarks.Hosting;
using Catalog.Api.Data;

namespace Benchmarks;

/// <summary>
/// Seed 000: HttpClient's default ResponseContentRead buffers the whole body in a MemoryStream before
/// GetAsync returns; ResponseHeadersRead hands over the socket stream. Published: 75-93% fewer allocations.
/// </summary>
[MemoryDiagnoser]
public class CompletionOptionBenchmarks
{
    private KestrelHost _server = null!;
    private HttpClient _client = null!;
    private readonly byte[] _sink = new byte[64 * 1024];

    [Params(1_000, 86_000)]
    public int Size { get; set; }

    [GlobalSetup]
    public async Task SetupAsync()
    {
        _server = await StaticJsonServer.StartAsync(SampleProducts.Json(Size));
        _client = new HttpClient { BaseAddress = _server.BaseAddress };
    }

    [GlobalCleanup]
    public async Task CleanupAsync()
    {
        _client.Dispose();
        await _server.DisposeAsync();
    }

    [Benchmark(Baseline = true)]
    public Task<long> ContentRead_ReadBody() => ReadBodyAsync(HttpCompletionOption.ResponseContentRead);

    [Benchmark]
    public Task<long> HeadersRead_ReadBody() => ReadBodyAsync(HttpCompletionOption.ResponseHeadersRead);

    [Benchmark]
    public Task<int> ContentRead_Deserialize() => DeserializeAsync(HttpCompletionOption.ResponseContentRead);

    [Benchmark]
    public Task<int> HeadersRead_Deserialize() => DeserializeAsync(HttpCompletionOption.ResponseHeadersRead);

    private async Task<long> ReadBodyAsync(HttpCompletionOption completion)
    {
        using var response = await _client.GetAsync(StaticJsonServer.Path, completion);
        await using var stream = await response.Content.ReadAsStreamAsync();
        long total = 0;
        int read;
        while ((read = await stream.ReadAsync(_sink)) > 0)
        {
            total += read;
        }

        return total;
    }

    private async Task<int> DeserializeAsync(HttpCompletionOption completion)
    {
        using var response = await _client.GetAsync(StaticJsonServer.Path, completion);
        return (await response.Content.ReadFromJsonAsync<List<Product>>(JsonSerializerOptions.Web))!.Count;
    }
}
