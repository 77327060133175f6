using System.Net.Http.Json;
using System.Text.Json;
using BenchmarkDotNet.Attributes;
using Benchmarks.Hosting;
using Catalog.Api.Data;
using Catalog.Api.Serialization;

namespace Benchmarks;

/// <summary>
/// Seed 001: the ways to GET a JSON array and deserialize it with HttpClient, against Kestrel on
/// loopback. Baseline: GetAsync + ReadAsStringAsync + Deserialize. Published at 10,000 items: streaming
/// (ResponseHeadersRead + stream) took 0.70x the time and 0.13x the allocations of the baseline.
/// Size 86,000 is the project's 25 MB catalog.
/// </summary>
[MemoryDiagnoser]
public class JsonGetBenchmarks : StaticJsonBenchmark
{
    private static readonly JsonSerializerOptions Web = JsonSerializerOptions.Web;
    private static readonly Newtonsoft.Json.JsonSerializer NewtonsoftSerializer = Newtonsoft.Json.JsonSerializer.CreateDefault();
    [Params(10, 100, 1_000, 10_000, 86_000)]
    public override int Size { get; set; }

    [Benchmark(Baseline = true)]
    public async Task<int> GetAsync_ReadAsStringAsync()
    {
        using var response = await Client.GetAsync(StaticJsonServer.Path);
        var json = await response.Content.ReadAsStringAsync();
        return JsonSerializer.Deserialize<List<Product>>(json, Web)!.Count;
    }

    [Benchmark]
    public async Task<int> GetAsync_ReadAsStreamAsync()
    {
        using var response = await Client.GetAsync(StaticJsonServer.Path);
        await using var stream = await response.Content.ReadAsStreamAsync();
        return (await JsonSerializer.DeserializeAsync<List<Product>>(stream, Web))!.Count;
    }

    [Benchmark]
    public async Task<int> GetAsync_ReadFromJsonAsync()
    {
        using var response = await Client.GetAsync(StaticJsonServer.Path);
        return (await response.Content.ReadFromJsonAsync<List<Product>>(Web))!.Count;
    }

    [Benchmark]
    public async Task<int> GetAsync_ReadAsStringAsync_HeadersRead()
    {
        using var response = await Client.GetAsync(StaticJsonServer.Path, HttpCompletionOption.ResponseHeadersRead);
        var json = await response.Content.ReadAsStringAsync();
        return JsonSerializer.Deserialize<List<Product>>(json, Web)!.Count;
    }

    [Benchmark]
    public async Task<int> GetAsync_ReadAsStreamAsync_HeadersRead()
    {
        using var response = await Client.GetAsync(StaticJsonServer.Path, HttpCompletionOption.ResponseHeadersRead);
        await using var stream = await response.Content.ReadAsStreamAsync();
        return (await JsonSerializer.DeserializeAsync<List<Product>>(stream, Web))!.Count;
    }

    [Benchmark]
    public async Task<int> GetAsync_ReadFromJsonAsync_HeadersRead()
    {
        using var response = await Client.GetAsync(StaticJsonServer.Path, HttpCompletionOption.ResponseHeadersRead);
        return (await response.Content.ReadFromJsonAsync<List<Product>>(Web))!.Count;
    }

    [Benchmark]
    public async Task<int> GetStreamAsync()
    {
        await using var stream = await Client.GetStreamAsync(StaticJsonServer.Path);
        return (await JsonSerializer.DeserializeAsync<List<Product>>(stream, Web))!.Count;
    }

    [Benchmark]
    public async Task<int> GetStringAsync() =>
        JsonSerializer.Deserialize<List<Product>>(await Client.GetStringAsync(StaticJsonServer.Path), Web)!.Count;

    [Benchmark]
    public async Task<int> GetFromJsonAsync() =>
        (await Client.GetFromJsonAsync<List<Product>>(StaticJsonServer.Path, Web))!.Count;

    [Benchmark]
    public async Task<int> Newtonsoft_ReadAsString()
    {
        using var response = await Client.GetAsync(StaticJsonServer.Path);
        var json = await response.Content.ReadAsStringAsync();
        return Newtonsoft.Json.JsonConvert.DeserializeObject<List<Product>>(json)!.Count;
    }

    [Benchmark]
    public async Task<int> Newtonsoft_Stream_HeadersRead()
    {
        using var response = await Client.GetAsync(StaticJsonServer.Path, HttpCompletionOption.ResponseHeadersRead);
        await using var stream = await response.Content.ReadAsStreamAsync();
        using var reader = new Newtonsoft.Json.JsonTextReader(new StreamReader(stream));
        return NewtonsoftSerializer.Deserialize<List<Product>>(reader)!.Count;
    }

    /// <summary>The Catalog's source-generated metadata: no reflection at run time.</summary>
    [Benchmark]
    public async Task<int> SourceGenerated_Stream_HeadersRead()
    {
        using var response = await Client.GetAsync(StaticJsonServer.Path, HttpCompletionOption.ResponseHeadersRead);
        await using var stream = await response.Content.ReadAsStreamAsync();
        return (await JsonSerializer.DeserializeAsync(stream, CatalogJsonContext.Default.ListProduct))!.Count;
    }

    /// <summary>What the Frontend's optimized client does (Refit's IAsyncEnumerable): one item at a time, no list.</summary>
    [Benchmark]
    public async Task<int> SourceGenerated_AsyncEnumerable_HeadersRead()
    {
        using var response = await Client.GetAsync(StaticJsonServer.Path, HttpCompletionOption.ResponseHeadersRead);
        await using var stream = await response.Content.ReadAsStreamAsync();
        var count = 0;
        await foreach (var product in JsonSerializer.DeserializeAsyncEnumerable(stream, CatalogJsonContext.Default.Product))
        {
            count += product is null ? 0 : 1;
        }

        return count;
    }
}
