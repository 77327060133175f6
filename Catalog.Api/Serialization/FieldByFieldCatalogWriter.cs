using System.Text.Json;
using Catalog.Api.Data;
using HttpPerf.ServiceDefaults.Http;

namespace Catalog.Api.Serialization;

/// <summary>
/// The limit: each row goes from the SQLite reader straight into a <see cref="Utf8JsonWriter"/> on the response,
/// column by column: no product objects, no strings, the text columns copied as the UTF-8 SQLite already holds
/// (<see cref="ProductRows"/>). Memory holds one pooled 256 KB buffer, not the catalog; the first bytes leave as soon
/// as the first rows are read, in 230 KB writes (LargeWrites); nothing touches the disk. The JSON is the same, byte
/// for byte, as System.Text.Json serializing <see cref="Product"/> (the property names below are its camelCase).
/// Its page, with the rungs measured side by side: docs/pitfalls/Catalog.Serialization.md.
/// </summary>
public sealed class FieldByFieldCatalogWriter(CatalogStore store) : ICatalogWriter
{
    private static readonly JsonEncodedText Id = JsonEncodedText.Encode("id");
    private static readonly JsonEncodedText Sku = JsonEncodedText.Encode("sku");
    private static readonly JsonEncodedText Name = JsonEncodedText.Encode("name");
    private static readonly JsonEncodedText Description = JsonEncodedText.Encode("description");
    private static readonly JsonEncodedText Brand = JsonEncodedText.Encode("brand");
    private static readonly JsonEncodedText Category = JsonEncodedText.Encode("category");
    private static readonly JsonEncodedText Price = JsonEncodedText.Encode("price");
    private static readonly JsonEncodedText Stock = JsonEncodedText.Encode("stock");

    public async Task WriteAllProductsAsync(HttpContext context, int after, CancellationToken cancellationToken)
    {
        await using var rows = new ProductRows(await store.ReadAllAsync(after, cancellationToken));
        using var writer = LargeWrites.RentJsonWriter(context.Response);
        var json = writer.Json;
        json.WriteStartArray();
        while (await rows.ReadAsync(cancellationToken))
        {
            json.WriteStartObject();
            json.WriteNumber(Id, rows.Id);
            json.WriteString(Sku, rows.Sku);
            json.WriteString(Name, rows.Name);
            json.WriteString(Description, rows.Description);
            json.WriteString(Brand, rows.Brand);
            json.WriteString(Category, rows.Category);
            json.WriteNumber(Price, rows.Price);
            json.WriteNumber(Stock, rows.Stock);
            json.WriteEndObject();
            await LargeWrites.FlushIfFullAsync(json, cancellationToken);
        }

        json.WriteEndArray();
        await json.FlushAsync(cancellationToken);
    }
}
