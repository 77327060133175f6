using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using Microsoft.Data.Sqlite;

namespace Catalog.Api.Data;

/// <summary>
/// The products table read row by row, by ordinal, without objects: text columns are handed out as the UTF-8
/// bytes SQLite holds for the current row (valid until the next <see cref="ReadAsync"/>), numbers as numbers.
/// <see cref="SqliteDataReader.GetString"/> would decode every text column into a new UTF-16 string, only for
/// the JSON writer to encode it back to UTF-8.
/// The eight column reads a row call SQLite directly (<see cref="Native"/>): through SQLitePCL each one takes and
/// releases a reference on the statement's <see cref="SafeHandle"/> and switches the thread out of and back into
/// the runtime's cooperative mode, which together cost more than SQLite's own work to step through the table.
/// </summary>
public sealed partial class ProductRows(SqliteDataReader reader) : IAsyncDisposable
{
    // The ordinals of CatalogStore.ReadAllAsync's columns.
    private const int IdColumn = 0, SkuColumn = 1, NameColumn = 2, DescriptionColumn = 3, BrandColumn = 4, CategoryColumn = 5, PriceColumn = 6, StockColumn = 7;

    // The statement, which lives as long as the reader does: the reader keeps its SafeHandle referenced until disposed.
    private nint _statement;

    public int Id => Native.sqlite3_column_int(_statement, IdColumn);

    public ReadOnlySpan<byte> Sku => Text(SkuColumn);

    public ReadOnlySpan<byte> Name => Text(NameColumn);

    public ReadOnlySpan<byte> Description => Text(DescriptionColumn);

    public ReadOnlySpan<byte> Brand => Text(BrandColumn);

    public ReadOnlySpan<byte> Category => Text(CategoryColumn);

    /// <summary>The price column holds cents; the catalog shows them with two decimals, as <see cref="Product.Price"/> does.</summary>
    public decimal Price => new(PriceCents, 0, 0, false, scale: 2);

    /// <summary>The price column as stored: cents.</summary>
    public int PriceCents => Native.sqlite3_column_int(_statement, PriceColumn);

    public int Stock => Native.sqlite3_column_int(_statement, StockColumn);

    public async Task<bool> ReadAsync(CancellationToken cancellationToken)
    {
        var read = await reader.ReadAsync(cancellationToken);
        _statement = read ? reader.Handle!.DangerousGetHandle() : 0;
        return read;
    }

    /// <summary>Closes the reader, and with it its connection (<see cref="CatalogStore.ReadAllAsync"/>).</summary>
    public ValueTask DisposeAsync() => reader.DisposeAsync();

    private unsafe ReadOnlySpan<byte> Text(int column)
    {
        // sqlite3_column_blob first, then _bytes, as SQLite's documentation orders them: the length is of the bytes returned.
        var bytes = Native.sqlite3_column_blob(_statement, column);
        return new ReadOnlySpan<byte>((void*)bytes, Native.sqlite3_column_bytes(_statement, column));
    }

    /// <summary>
    /// SQLite's column reads, from the same e_sqlite3 library SQLitePCL loads. Each reads a value SQLite already holds for
    /// the current row: it never blocks, never calls back and never fails, which is what <see cref="SuppressGCTransitionAttribute"/> asks.
    /// </summary>
    private static partial class Native
    {
        private const string Library = "e_sqlite3";

        [LibraryImport(Library), SuppressGCTransition, UnmanagedCallConv(CallConvs = [typeof(CallConvCdecl)])]
        internal static partial int sqlite3_column_int(nint statement, int column);

        [LibraryImport(Library), SuppressGCTransition, UnmanagedCallConv(CallConvs = [typeof(CallConvCdecl)])]
        internal static partial nint sqlite3_column_blob(nint statement, int column);

        [LibraryImport(Library), SuppressGCTransition, UnmanagedCallConv(CallConvs = [typeof(CallConvCdecl)])]
        internal static partial int sqlite3_column_bytes(nint statement, int column);
    }
}
