using System.Text.Json;
using System.Text;
using Frontend.Api.CatalogClient;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.ServiceDefaults.Selection;
using Microsoft.AspNetCore.Http;
using HttpPerf.Tests.Infrastructure;
using ProductView = Frontend.Api.CatalogClient.ProductView;
using CatalogProduct = Frontend.Api.CatalogClient.CatalogProduct;

namespace HttpPerf.Tests.Lessons;

/// <summary>
/// Frontend.Api's reader and its three rungs on input the seeded catalog never has: escaped, non-ASCII and emoji
/// text, and a body that arrives one byte at a time, so every product is cut at every possible place.
/// </summary>
[Trait(Kind.Name, Kind.Lessons)]
[Lesson(Pitfalls.FrontendCatalogClient)]
public sealed class ProductStreamingTests
{
    private static readonly CatalogProduct[] Tricky =
    [
        new(1, "SKU-0000001", "Rain \"Shell\"", "Line one\nline two, <b>bold</b> & 'quoted' \\ backslash", "Contoso", "Outdoor", 442.00m, 0),
        new(2, "SKU-ÉTÉ-02", "Été Jacket", "Café crème, naïve façade: 日本語 and an emoji 🧭", "Fabrikam", "Apparel", 0.50m, 7),
        new(3, "SKU-0000003", "", "", "", "", 1_234_567.89m, 10),
    ];

    [Fact]
    public async Task The_reader_returns_each_product_whole_however_the_body_is_cut()
    {
        var body = JsonSerializer.SerializeToUtf8Bytes(Tricky.ToList(), FrontendJsonContext.Default.ListCatalogProduct);
        await using var reader = new CatalogProductReader(new OneByteAtATime(body));

        var read = new List<CatalogProduct>();
        while (await reader.ReadAsync(TestContext.Current.CancellationToken))
        {
            read.Add(new CatalogProduct(
                reader.Id, Encoding.UTF8.GetString(reader.Sku), Encoding.UTF8.GetString(reader.Name), Encoding.UTF8.GetString(reader.Description),
                Encoding.UTF8.GetString(reader.Brand), Encoding.UTF8.GetString(reader.Category), reader.Price, reader.Stock));
        }

        Assert.Equal(Tricky, read);
    }

    [Fact]
    public async Task The_reader_refuses_a_body_that_ends_mid_array()
    {
        var body = JsonSerializer.SerializeToUtf8Bytes(Tricky.ToList(), FrontendJsonContext.Default.ListCatalogProduct);
        await using var reader = new CatalogProductReader(new MemoryStream(body[..^40]));

        await Assert.ThrowsAnyAsync<JsonException>(async () =>
        {
            while (await reader.ReadAsync(TestContext.Current.CancellationToken))
            {
            }
        });
    }

    [Theory]
    [InlineData(PerfMode.Naive)]
    [InlineData(PerfMode.Streaming)]
    [InlineData(PerfMode.Optimized)]
    public async Task Every_rung_writes_the_bytes_the_view_models_serialize_to(string rung)
    {
        var body = JsonSerializer.SerializeToUtf8Bytes(Tricky.ToList(), FrontendJsonContext.Default.ListCatalogProduct);
        var context = new DefaultHttpContext();
        var written = new MemoryStream();
        context.Response.Body = written;
        var catalog = new FixedCatalog(body);
        IProductListWriter writer = rung switch
        {
            PerfMode.Naive => new BufferedProductListWriter(catalog, new RequestVariants()),
            PerfMode.Streaming => new StreamingProductListWriter(catalog),
            _ => new FieldByFieldProductListWriter(catalog),
        };

        await writer.WriteProductsAsync(context, TestContext.Current.CancellationToken);

        var expected = JsonSerializer.SerializeToUtf8Bytes(Tricky.Select(ProductView.From).ToList(), FrontendJsonContext.Default.ListProductView);
        Assert.Equal(Encoding.UTF8.GetString(expected), Encoding.UTF8.GetString(written.ToArray()));
        Assert.Equal("application/json; charset=utf-8", context.Response.ContentType);
    }

    private sealed class FixedCatalog(byte[] body) : ICatalogApi
    {
        public Task<HttpResponseMessage> GetProductsResponseAsync(CancellationToken cancellationToken) =>
            Task.FromResult(new HttpResponseMessage { Content = new StreamContent(new OneByteAtATime(body)) });

        public Task<HttpResponseMessage> GetProductsAfterResponseAsync(int after, string silentReplica, CancellationToken cancellationToken) => throw new NotSupportedException();

        public Task<HttpResponseMessage> GetBaselineResponseAsync(CancellationToken cancellationToken) => throw new NotSupportedException();
    }

    /// <summary>A body that hands out one byte per read.</summary>
    private sealed class OneByteAtATime(byte[] bytes) : MemoryStream(bytes, writable: false)
    {
        public override int Read(byte[] buffer, int offset, int count) => base.Read(buffer, offset, Math.Min(count, 1));

        public override ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default) =>
            base.ReadAsync(buffer[..Math.Min(buffer.Length, 1)], cancellationToken);
    }
}
