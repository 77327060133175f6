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
public class CompletionOptionBenchmarks : StaticJsonBenchmark
{
    private readonly byte[] _sink = new byte[64 * 1024];

    [Params(1_000, 86_000)]
    public override int Size { get; set; }

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
        using var response = await Client.GetAsync(StaticJsonServer.Path, completion);
        return await Body.DrainAsync(response, _sink);
    }

    private async Task<int> DeserializeAsync(HttpCompletionOption completion)
    {
        using var response = await Client.GetAsync(StaticJsonServer.Path, completion);
        return (await response.Content.ReadFromJsonAsync<List<Product>>(JsonSerializerOptions.Web))!.Count;
    }
}
