using System.Buffers;
using System.Text.Json;
using System.Text;
using Catalog.Api.Data;
using Catalog.Api.Grpc;
using Catalog.Api.Serialization;
using HttpPerf.ServiceDefaults.Http;
using Frontend.Api.Grpc;
using Google.Protobuf;
using ProductList = HttpPerf.Catalog.Grpc.ProductList;
using ProductMessage = HttpPerf.Catalog.Grpc.Product;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.ServiceDefaults.Selection;
using Microsoft.AspNetCore.Http;
using Microsoft.Data.Sqlite;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting.Internal;
using Microsoft.Extensions.Options;
using HttpPerf.Tests.Infrastructure;

namespace HttpPerf.Tests.Lessons;

/// <summary>
/// Catalog.Api's three rungs on text the seeded catalog never has (escaped, non-ASCII, emoji), read from a real
/// SQLite file: the same products from every rung, and the same bytes from the two System.Text.Json rungs; and the
/// gRPC stream's messages, encoded from the rows by hand, are Google.Protobuf's bytes, which Frontend.Api reads back.
/// </summary>
[Trait(Kind.Name, Kind.Lessons)]
public sealed class CatalogWriterTests : IDisposable
{
    private static readonly Product[] Tricky =
    [
        new(1, "SKU-0000001", "Rain \"Shell\"", "Line one\nline two, <b>bold</b> & 'quoted' \\ backslash", "Contoso", "Outdoor", 442.00m, 0),
        new(2, "SKU-ÉTÉ-02", "Été Jacket", "Café crème, naïve façade: 日本語 and an emoji 🧭", "Fabrikam", "Apparel", 0.50m, 7),
        new(3, "SKU-0000003", "", "", "", "", 1_234_567.89m, 10),
    ];

    private readonly string _folder = Directory.CreateTempSubdirectory("catalog-writers-").FullName;

    [Theory]
    [Lesson(Pitfalls.CatalogSerialization)]
    [InlineData(PerfMode.Naive)]
    [InlineData(PerfMode.Streaming)]
    [InlineData(PerfMode.Optimized)]
    public async Task Every_rung_writes_the_products_as_they_are_stored(string rung)
    {
        var store = Seed();
        using var services = new ServiceCollection().AddLogging().AddMvcCore().AddNewtonsoftJson().Services.BuildServiceProvider();
        var written = await WriteAsync(rung, store, services);

        Assert.Equal(Tricky, JsonSerializer.Deserialize(written, CatalogJsonContext.Default.ListProduct));
        if (rung != PerfMode.Naive)
        {
            // The same bytes as System.Text.Json serializing the records. Newtonsoft (naive) escapes less
            // (it writes é and < as they are), so only the seeded ASCII catalog is byte-identical on that rung.
            Assert.Equal(Encoding.UTF8.GetString(JsonSerializer.SerializeToUtf8Bytes(Tricky.ToList(), CatalogJsonContext.Default.ListProduct)), Encoding.UTF8.GetString(written));
        }
    }

    [Fact]
    [Lesson(Pitfalls.FrontendGrpc)]
    public async Task The_grpc_stream_encodes_Google_Protobufs_bytes_and_the_Frontend_reads_the_products_back()
    {
        var store = Seed();
        using var encoded = new EncodedProductList();
        await using (var rows = new ProductRows(await store.ReadAllAsync(0, TestContext.Current.CancellationToken)))
        {
            while (await rows.ReadAsync(TestContext.Current.CancellationToken))
            {
                encoded.Add(rows);
            }
        }

        var generated = new ProductList();
        generated.Products.AddRange(Tricky.Select(p => new ProductMessage
        {
            Id = p.Id, Sku = p.Sku, Name = p.Name, Description = p.Description, Brand = p.Brand, Category = p.Category, PriceCents = (long)(p.Price * 100), Stock = p.Stock,
        }));
        Assert.Equal(Tricky.Length, encoded.Count);
        Assert.Equal(Convert.ToHexString(generated.ToByteArray()), Convert.ToHexString(encoded.Bytes));

        using var batch = ProductBatch.CopyOf(new ReadOnlySequence<byte>(encoded.Bytes.ToArray()));
        var reader = new ProductBatchReader(batch);
        var read = new List<Product>();
        while (reader.Read())
        {
            read.Add(new(reader.Id, Encoding.UTF8.GetString(reader.Sku), Encoding.UTF8.GetString(reader.Name), Encoding.UTF8.GetString(reader.Description),
                Encoding.UTF8.GetString(reader.Brand), Encoding.UTF8.GetString(reader.Category), reader.Price, reader.Stock));
        }

        Assert.Equal(Tricky, read);
    }

    public void Dispose()
    {
        SqliteConnection.ClearAllPools();
        Directory.Delete(_folder, recursive: true);
    }

    private static async Task<byte[]> WriteAsync(string rung, CatalogStore store, IServiceProvider services)
    {
        var context = new DefaultHttpContext { RequestServices = services };
        var body = new MemoryStream();
        context.Response.Body = body;
        ICatalogWriter writer = rung switch
        {
            PerfMode.Naive => new NaiveCatalogWriter(store, new RequestVariants(), new HeldMemory(new MemoryBudget(Options.Create(new MemoryBudget.Options())))),
            PerfMode.Streaming => new StreamingCatalogWriter(store),
            _ => new FieldByFieldCatalogWriter(store),
        };

        await writer.WriteAllProductsAsync(context, 0, TestContext.Current.CancellationToken);
        return body.ToArray();
    }

    /// <summary>The Catalog's table, with the tricky rows, where a <see cref="CatalogStore"/> of their count looks.</summary>
    private CatalogStore Seed()
    {
        var options = Options.Create(new CatalogOptions { ProductCount = Tricky.Length, DataDirectory = _folder });
        var store = new CatalogStore(options, new HostingEnvironment { ContentRootPath = _folder });
        using var connection = new SqliteConnection($"Data Source={store.DatabasePath};Pooling=False");
        connection.Open();
        using var command = connection.CreateCommand();
        command.CommandText = """
            CREATE TABLE products (
                id INTEGER PRIMARY KEY, sku TEXT NOT NULL, name TEXT NOT NULL, description TEXT NOT NULL,
                brand TEXT NOT NULL, category TEXT NOT NULL, price_cents INTEGER NOT NULL, stock INTEGER NOT NULL)
            """;
        command.ExecuteNonQuery();
        foreach (var p in Tricky)
        {
            command.CommandText = "INSERT INTO products VALUES ($id, $sku, $name, $description, $brand, $category, $price, $stock)";
            command.Parameters.Clear();
            command.Parameters.AddWithValue("$id", p.Id);
            command.Parameters.AddWithValue("$sku", p.Sku);
            command.Parameters.AddWithValue("$name", p.Name);
            command.Parameters.AddWithValue("$description", p.Description);
            command.Parameters.AddWithValue("$brand", p.Brand);
            command.Parameters.AddWithValue("$category", p.Category);
            command.Parameters.AddWithValue("$price", (int)(p.Price * 100));
            command.Parameters.AddWithValue("$stock", p.Stock);
            command.ExecuteNonQuery();
        }

        return store;
    }
}
