using BenchmarkDotNet.Attributes;

namespace Benchmarks.Hosting;

/// <summary>A client-side benchmark against <see cref="StaticJsonServer"/> serving <see cref="Size"/> products.</summary>
public abstract class StaticJsonBenchmark
{
    private KestrelHost _server = null!;

    /// <summary>Products in the JSON array; each subclass gives its own [Params].</summary>
    public abstract int Size { get; set; }

    protected HttpClient Client { get; private set; } = null!;

    [GlobalSetup]
    public async Task StartServerAsync()
    {
        _server = await StaticJsonServer.StartAsync(SampleProducts.Json(Size));
        Client = new HttpClient { BaseAddress = _server.BaseAddress };
    }

    [GlobalCleanup]
    public async Task StopServerAsync()
    {
        Client.Dispose();
        await _server.DisposeAsync();
    }
}
