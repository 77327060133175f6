using Microsoft.Data.Sqlite;
using SQLitePCL;

using Catalog.Api.Data;

namespace Catalog.Api.Serialization;

/// <summary>
/// The products table read row by row, by ordinal, without objects: text columns are handed out as the UTF-8
/// bytes SQLite holds for the current row (valid until the next <see cref="ReadAsync"/>), numbers as numbers.
/// <see cref="SqliteDataReader.GetString"/> would decode every text column into a new UTF-16 string, only for
/// the JSON writer to encode it back to UTF-8.
/// </summary>
public sealed class ProductRows(SqliteDataReader reader) : IAsyncDisposable
{
    // The ordinals of CatalogStore.ReadAllAsync's columns.
    private const int IdColumn = 0, SkuColumn = 1, NameColumn = 2, DescriptionColumn = 3, BrandColumn = 4, CategoryColumn = 5, PriceColumn = 6, StockColumn = 7;

    private sqlite3_stmt Statement => reader.Handle!;

    public int Id => raw.sqlite3_column_int(Statement, IdColumn);

    public ReadOnlySpan<byte> Sku => raw.sqlite3_column_blob(Statement, SkuColumn);

    public ReadOnlySpan<byte> Name => raw.sqlite3_column_blob(Statement, NameColumn);

    public ReadOnlySpan<byte> Description => raw.sqlite3_column_blob(Statement, DescriptionColumn);

    public ReadOnlySpan<byte> Brand => raw.sqlite3_column_blob(Statement, BrandColumn);

    public ReadOnlySpan<byte> Category => raw.sqlite3_column_blob(Statement, CategoryColumn);

    /// <summary>The price column holds cents; the catalog shows them with two decimals, as <see cref="Product.Price"/> does.</summary>
    public decimal Price => new(raw.sqlite3_column_int(Statement, PriceColumn), 0, 0, false, scale: 2);

    public int Stock => raw.sqlite3_column_int(Statement, StockColumn);

    public Task<bool> ReadAsync(CancellationToken cancellationToken) => reader.ReadAsync(cancellationToken);

    /// <summary>Closes the reader, and with it its connection (<see cref="CatalogStore.ReadAllAsync"/>).</summary>
    public ValueTask DisposeAsync() => reader.DisposeAsync();
}
