using BenchmarkDotNet.Attributes;
using Benchmarks.Hosting;
using Catalog.Api;
using Catalog.Api.Data;
using Catalog.Api.Serialization;
using Frontend.Api.CatalogClient;
using HttpPerf.ServiceDefaults;
using HttpPerf.ServiceDefaults.Contract;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.DependencyInjection;

namespace Benchmarks;

/// <summary>
/// The floor of each hop's own work on the optimized product list, with HTTP taken away. The optimized rungs'
/// own classes, unchanged, on the default 25.8 MB catalog (86,000 products), writing into <see cref="Stream.Null"/>:
/// what is left is the work no transport can remove. SQLite alone is the Catalog's floor under its JSON; the Catalog's
/// writer without a socket is its floor under its I/O; the Frontend's reader and writer over the catalog's bytes in
/// memory is the Frontend's. A hop's CPU per request in the bench, less the static-bytes baseline's for the same hop
/// (the same bytes through the same sockets), is what these should account for: its pitfall page says how close.
/// The Gateway has no work of its own to take away from its I/O: its floor is that baseline relay (bench).
/// </summary>
[MemoryDiagnoser]
public class CatalogFloorBenchmarks
{
    private readonly string _data = Directory.CreateTempSubdirectory("bench-floor-").FullName;
    private KestrelHost _catalog = null!;
    private CatalogStore _store = null!;
    private FieldByFieldCatalogWriter _catalogWriter = null!;

    [GlobalSetup]
    public async Task SetupAsync()
    {
        _catalog = await KestrelHost.StartAsync(
            new Dictionary<string, string?> { [SystemContract.ConfigurationKey(SystemContract.CatalogDataDirectory)] = _data },
            builder =>
            {
                builder.AddServiceDefaults();
                builder.AddCatalogServices();
            },
            app =>
            {
                app.UseServiceDefaults();
                app.MapCatalogApi();
            });
        _store = _catalog.Services.GetRequiredService<CatalogStore>();
        _catalogWriter = ActivatorUtilities.CreateInstance<FieldByFieldCatalogWriter>(_catalog.Services);
    }

    [GlobalCleanup]
    public async Task CleanupAsync()
    {
        await _catalog.DisposeAsync();
        Directory.Delete(_data, recursive: true);
    }

    /// <summary>SQLite steps through every row and hands out its eight columns (ProductRows), and nothing is written.</summary>
    /// <returns>The rows read.</returns>
    [Benchmark(Baseline = true)]
    public async Task<int> SqliteRowsOnly()
    {
        await using var rows = new ProductRows(await _store.ReadAllAsync(0, CancellationToken.None));
        var count = 0;
        long touched = 0;
        while (await rows.ReadAsync(CancellationToken.None))
        {
            touched += rows.Id + rows.Sku.Length + rows.Name.Length + rows.Description.Length + rows.Brand.Length
                + rows.Category.Length + (long)rows.Price + rows.Stock;
            count++;
        }

        return touched > 0 ? count : 0;
    }

    /// <summary>The Catalog's optimized rung, whole, into no socket.</summary>
    /// <returns>The bytes it wrote.</returns>
    [Benchmark]
    public async Task<long> OptimizedWriter_NoSocket()
    {
        var context = Discarding.Context();
        await _catalogWriter.WriteAllProductsAsync(context, 0, CancellationToken.None);
        return ((Discarding)context.Response.Body).Length;
    }

}

/// <summary>
/// The Frontend's floor under its I/O (see <see cref="CatalogFloorBenchmarks"/>): its optimized rung, whole, reading
/// 25.8 MB of catalog-shaped JSON from memory (<see cref="SampleProducts"/>), as Refit would hand the Catalog's answer
/// over, into no socket.
/// </summary>
[MemoryDiagnoser]
public class FrontendFloorBenchmarks
{
    private FieldByFieldProductListWriter _writer = null!;

    /// <summary>Catalog-shaped JSON of the default size, as the Catalog's optimized writer produces it.</summary>
    [GlobalSetup]
    public void Setup() => _writer = new FieldByFieldProductListWriter(new InMemoryCatalog(SampleProducts.Json(86_000)));

    /// <returns>The bytes it wrote.</returns>
    [Benchmark(Baseline = true)]
    public async Task<long> OptimizedReaderAndWriter_NoSocket()
    {
        var context = Discarding.Context();
        await _writer.WriteProductsAsync(context, CancellationToken.None);
        return ((Discarding)context.Response.Body).Length;
    }

    /// <summary>Catalog.Api's answer from memory, as Refit would hand it over.</summary>
    private sealed class InMemoryCatalog(byte[] json) : ICatalogApi
    {
        public Task<HttpResponseMessage> GetProductsResponseAsync(CancellationToken cancellationToken) =>
            Task.FromResult(new HttpResponseMessage { Content = new ByteArrayContent(json) });

        public Task<HttpResponseMessage> GetProductsAfterResponseAsync(int after, string silentReplica, CancellationToken cancellationToken) =>
            throw new NotSupportedException("A body from memory never stops mid-way.");

        public Task<HttpResponseMessage> GetBaselineResponseAsync(CancellationToken cancellationToken) =>
            GetProductsResponseAsync(cancellationToken);
    }
}

/// <summary>A response body that counts what is written to it and keeps none of it.</summary>
internal sealed class Discarding : Stream
{
    private long _length;

    public static DefaultHttpContext Context() => new() { Response = { Body = new Discarding() } };

    public override bool CanRead => false;

    public override bool CanSeek => false;

    public override bool CanWrite => true;

    public override long Length => _length;

    public override long Position { get => _length; set => throw new NotSupportedException(); }

    public override void Write(byte[] buffer, int offset, int count) => _length += count;

    public override void Write(ReadOnlySpan<byte> buffer) => _length += buffer.Length;

    public override ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default)
    {
        _length += buffer.Length;
        return ValueTask.CompletedTask;
    }

    public override Task WriteAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken)
    {
        _length += count;
        return Task.CompletedTask;
    }

    public override void Flush()
    {
    }

    public override Task FlushAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public override int Read(byte[] buffer, int offset, int count) => throw new NotSupportedException();

    public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

    public override void SetLength(long value) => throw new NotSupportedException();
}
