using Catalog.Api;
using HttpPerf.ServiceDefaults;
using BenchmarkDotNet.Attributes;
using Benchmarks.Hosting;
using HttpPerf.ServiceDefaults.Contract;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Mvc;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;

namespace Benchmarks;

/// <summary>
/// Seed 004: the Catalog's own writers (flag Catalog.Serialization), served by the Catalog's real wiring
/// on Kestrel in this process, the client reading the whole body. Naive is MVC's Newtonsoft formatter,
/// which spools bodies over 32 KB to a temp file; "suppress buffering" is the seed's quick fix
/// (SuppressOutputFormatterBuffering + AllowSynchronousIO); optimized is System.Text.Json streaming.
/// Published for a 25 MB endpoint: 20 s -> 6-7 s locally -> 4 s. 340 / 3,400 / 86,000 products are
/// about 100 KB / 1 MB / 25 MB. Allocations include the server's, since it runs in this process.
/// </summary>
[MemoryDiagnoser]
public class CatalogSerializationBenchmarks
{
    private readonly string _data = Directory.CreateTempSubdirectory("bench-catalog-").FullName;
    private readonly byte[] _sink = new byte[64 * 1024];
    private KestrelHost _catalog = null!;
    private KestrelHost _suppressed = null!;
    private HttpClient _client = null!;

    [Params(340, 3_400, 86_000)]
    public int Products { get; set; }

    [GlobalSetup]
    public async Task SetupAsync()
    {
        _catalog = await StartCatalogAsync(suppressBuffering: false);
        _suppressed = await StartCatalogAsync(suppressBuffering: true);
        _client = new HttpClient();
    }

    [GlobalCleanup]
    public async Task CleanupAsync()
    {
        _client.Dispose();
        await _catalog.DisposeAsync();
        await _suppressed.DisposeAsync();
        Directory.Delete(_data, recursive: true);
    }

    [Benchmark(Baseline = true)]
    public Task<long> Newtonsoft_FormatterBuffering() => GetAsync(_catalog, "naive");

    [Benchmark]
    public Task<long> Newtonsoft_SuppressBuffering() => GetAsync(_suppressed, "naive");

    [Benchmark]
    public Task<long> SystemTextJson_Streaming() => GetAsync(_catalog, "optimized");

    private async Task<long> GetAsync(KestrelHost catalog, string mode)
    {
        using var request = new HttpRequestMessage(HttpMethod.Get, new Uri(catalog.BaseAddress, "/catalog/products"));
        request.Headers.Add("X-Perf-Mode", mode);
        using var response = await _client.SendAsync(request, HttpCompletionOption.ResponseHeadersRead);
        return await Body.DrainAsync(response, _sink);
    }

    private Task<KestrelHost> StartCatalogAsync(bool suppressBuffering) => KestrelHost.StartAsync(
        new Dictionary<string, string?>
        {
            [SystemContract.ConfigurationKey(SystemContract.CatalogProductCount)] = Products.ToString(System.Globalization.CultureInfo.InvariantCulture),
            [SystemContract.ConfigurationKey(SystemContract.CatalogDataDirectory)] = _data,
        },
        builder =>
        {
            builder.AddServiceDefaults();
            builder.AddCatalogServices();
            if (suppressBuffering)
            {
                builder.Services.Configure<MvcOptions>(options => options.SuppressOutputFormatterBuffering = true);
                builder.WebHost.ConfigureKestrel(kestrel => kestrel.AllowSynchronousIO = true);
            }
        },
        app =>
        {
            app.UseServiceDefaults();
            app.MapCatalogApi();
        });
}
