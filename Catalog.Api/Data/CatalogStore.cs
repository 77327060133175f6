using System.Data;
using System.Runtime.CompilerServices;
using Microsoft.Data.Sqlite;
using Microsoft.Extensions.Options;

namespace Catalog.Api.Data;

/// <summary>
/// The embedded SQLite store: one read-only table of products, read in id order, from the first or from the one after
/// a given id (a keyset read: the id is the table's rowid, so SQLite seeks to it rather than skipping rows).
/// </summary>
public sealed class CatalogStore
{
    private const string SelectAfter =
        "SELECT id, sku, name, description, brand, category, price_cents, stock FROM products WHERE id > $after ORDER BY id";

    /// <summary>The managed heap a listed product holds, measured on the seeded catalog (docs/memory.md).</summary>
    public const int HeldBytesPerProduct = 640;

    private readonly string _connectionString;

    static CatalogStore()
    {
        // A connection serves one request at a time, so the lock SQLite takes around every call on it (serialized
        // mode, e_sqlite3's default) guards nothing here; multi-thread mode leaves it out. SQLite takes this only
        // before it starts, which is at the first connection: this runs before the store opens one.
        SQLitePCL.Batteries_V2.Init();
        SQLitePCL.raw.sqlite3_config(SQLitePCL.raw.SQLITE_CONFIG_MULTITHREAD);
    }

    public CatalogStore(IOptions<CatalogOptions> options, IHostEnvironment environment)
    {
        var directory = Path.Combine(environment.ContentRootPath, options.Value.DataDirectory);
        ProductCount = options.Value.ProductCount;
        // The count is part of the name: changing it seeds a new file instead of serving a stale one.
        DatabasePath = Path.Combine(directory, $"catalog-v1-{ProductCount}.db");
        _connectionString = new SqliteConnectionStringBuilder { DataSource = DatabasePath, Mode = SqliteOpenMode.ReadOnly }.ToString();
    }

    public string DatabasePath { get; }

    public int ProductCount { get; }

    /// <summary>Every product after <paramref name="after"/> (0: all), one at a time: memory stays flat whatever the catalog size.</summary>
    public async IAsyncEnumerable<Product> StreamAllAsync(int after, [EnumeratorCancellation] CancellationToken cancellationToken)
    {
        await using var connection = await OpenAsync(cancellationToken);
        await using var command = Select(connection, after);
        await using var reader = await command.ExecuteReaderAsync(cancellationToken);
        while (await reader.ReadAsync(cancellationToken))
        {
            yield return new Product(
                Id: reader.GetInt32(0),
                Sku: reader.GetString(1),
                Name: reader.GetString(2),
                Description: reader.GetString(3),
                Brand: reader.GetString(4),
                Category: reader.GetString(5),
                Price: new decimal(reader.GetInt32(6), 0, 0, false, scale: 2), // cents, always two decimals
                Stock: reader.GetInt32(7));
        }
    }

    /// <summary>
    /// Every product after <paramref name="after"/> (0: all), as SQLite's reader over <c>id, sku, name, description,
    /// brand, category, price (cents), stock</c>, in that order, to read column by column; disposing the reader closes
    /// its connection.
    /// </summary>
    public async Task<SqliteDataReader> ReadAllAsync(int after, CancellationToken cancellationToken)
    {
        var connection = await OpenAsync(cancellationToken);
        try
        {
            // Not disposed here: that would close its reader. The reader's connection, closed with it, ends both.
            var command = Select(connection, after);
            return await command.ExecuteReaderAsync(CommandBehavior.CloseConnection, cancellationToken);
        }
        catch
        {
            await connection.DisposeAsync();
            throw;
        }
    }

    /// <summary>
    /// What <see cref="ListAllAsync"/> holds for the products after <paramref name="after"/>: each product's record, its
    /// strings (UTF-16) and its slot in the list, <see cref="HeldBytesPerProduct"/> on average as seeded.
    /// </summary>
    public long ListBytes(int after) => (long)Math.Max(0, ProductCount - Math.Max(0, after)) * HeldBytesPerProduct;

    /// <summary>Every product after <paramref name="after"/> (0: all) in one list, the way an ORM's ToListAsync hands them over.</summary>
    public async Task<List<Product>> ListAllAsync(int after, CancellationToken cancellationToken)
    {
        var products = new List<Product>();
        await foreach (var product in StreamAllAsync(after, cancellationToken))
        {
            products.Add(product);
        }

        return products;
    }

    private static SqliteCommand Select(SqliteConnection connection, int after)
    {
        var command = connection.CreateCommand();
        command.CommandText = SelectAfter;
        command.Parameters.AddWithValue("$after", after);
        return command;
    }

    // Not memory-mapped (PRAGMA mmap_size): a full scan steps 30% faster, but every open connection maps the file
    // anew and its pages count in the working set once per mapping: 16 scans in flight peaked at 432 MB instead of 151.
    private async Task<SqliteConnection> OpenAsync(CancellationToken cancellationToken)
    {
        var connection = new SqliteConnection(_connectionString);
        await connection.OpenAsync(cancellationToken);
        return connection;
    }
}
