using System.Buffers;
using System.Globalization;
using System.Text;
using System.Text.Json;
using Frontend.Api.Products;
using HttpPerf.ServiceDefaults.Http;

namespace Frontend.Api.CatalogClient;

/// <summary>
/// The fix: read the Catalog's answer as it arrives (Refit returns the response at its headers) one product at a
/// time (<see cref="CatalogProductReader"/>), and write each product's view straight into the response with a
/// <see cref="Utf8JsonWriter"/>, in 64 KB writes (LargeWrites). Memory holds two buffers, not the catalog; the
/// client gets its first bytes while the Catalog is still sending; and no object or string is made per product:
/// the view below is <see cref="ProductView.From"/>'s mapping, field by field, into the same JSON.
/// Measured end to end at 25 MB, every hop optimized (docs/results/bench): p50 161 ms (0.17x naive), Frontend.Api peak
/// working set 113 MB (0.09x) and 124 MB under 16 concurrent fetches (0.03x), 138 ms of CPU and 0.5 MB allocated a
/// request. Reading with Refit's IAsyncEnumerable and serializing ProductView objects instead allocated 94 MB a request.
/// </summary>
public sealed class StreamingProductListWriter(ICatalogApi catalog) : IProductListWriter
{
    private static readonly JsonEncodedText Id = JsonEncodedText.Encode("id");
    private static readonly JsonEncodedText Sku = JsonEncodedText.Encode("sku");
    private static readonly JsonEncodedText Title = JsonEncodedText.Encode("title");
    private static readonly JsonEncodedText Summary = JsonEncodedText.Encode("summary");
    private static readonly JsonEncodedText Brand = JsonEncodedText.Encode("brand");
    private static readonly JsonEncodedText Category = JsonEncodedText.Encode("category");
    private static readonly JsonEncodedText Price = JsonEncodedText.Encode("price");
    private static readonly JsonEncodedText Availability = JsonEncodedText.Encode("availability");
    private static readonly JsonEncodedText Url = JsonEncodedText.Encode("url");
    private static readonly JsonEncodedText SoldOut = JsonEncodedText.Encode("sold out");
    private static readonly JsonEncodedText LowStock = JsonEncodedText.Encode("low stock");
    private static readonly JsonEncodedText InStock = JsonEncodedText.Encode("in stock");

    public async Task WriteProductsAsync(HttpContext context, CancellationToken cancellationToken)
    {
        // Disposing the response, however the write ends, gives the Catalog connection back (or closes it mid-body).
        using var response = await catalog.GetProductsResponseAsync(cancellationToken);
        response.EnsureSuccessStatusCode();
        await using var products = new CatalogProductReader(await response.Content.ReadAsStreamAsync(cancellationToken));
        await using var json = LargeWrites.CreateJsonWriter(context.Response);
        var text = new ArrayBufferWriter<byte>(256);
        json.WriteStartArray();
        while (await products.ReadAsync(cancellationToken))
        {
            WriteView(json, products, text);
            await LargeWrites.FlushIfFullAsync(json, cancellationToken);
        }

        json.WriteEndArray();
        await json.FlushAsync(cancellationToken);
    }

    private static void WriteView(Utf8JsonWriter json, CatalogProductReader product, ArrayBufferWriter<byte> text)
    {
        json.WriteStartObject();
        json.WriteNumber(Id, product.Id);
        json.WriteString(Sku, product.Sku);
        json.WriteString(Title, Compose(text, product.Brand, " "u8, product.Name));
        json.WriteString(Summary, product.Description);
        json.WriteString(Brand, product.Brand);
        json.WriteString(Category, product.Category);
        json.WriteString(Price, FormatPrice(text, product.Price));
        json.WriteString(Availability, product.Stock switch
        {
            0 => SoldOut,
            < 10 => LowStock,
            _ => InStock,
        });
        json.WriteString(Url, ProductUrl(text, product.Sku));
        json.WriteEndObject();
    }

    /// <summary><c>$"{first}{second}{third}"</c> in UTF-8, in <paramref name="text"/>.</summary>
    private static ReadOnlySpan<byte> Compose(ArrayBufferWriter<byte> text, ReadOnlySpan<byte> first, ReadOnlySpan<byte> second, ReadOnlySpan<byte> third)
    {
        text.ResetWrittenCount();
        text.Write(first);
        text.Write(second);
        text.Write(third);
        return text.WrittenSpan;
    }

    /// <summary><c>$"EUR {price:0.00}"</c>, invariant culture, in UTF-8.</summary>
    private static ReadOnlySpan<byte> FormatPrice(ArrayBufferWriter<byte> text, decimal price)
    {
        text.ResetWrittenCount();
        text.Write("EUR "u8);
        price.TryFormat(text.GetSpan(64), out var written, "0.00", CultureInfo.InvariantCulture);
        text.Advance(written);
        return text.WrittenSpan;
    }

    /// <summary><c>$"/products/{sku.ToLowerInvariant()}"</c> in UTF-8: lowered byte by byte when ASCII (every SKU the Catalog makes), through a string otherwise.</summary>
    private static ReadOnlySpan<byte> ProductUrl(ArrayBufferWriter<byte> text, ReadOnlySpan<byte> sku)
    {
        text.ResetWrittenCount();
        text.Write("/products/"u8);
        if (Ascii.ToLower(sku, text.GetSpan(sku.Length), out var written) == OperationStatus.Done)
        {
            text.Advance(written);
        }
        else
        {
            text.Write(Encoding.UTF8.GetBytes(Encoding.UTF8.GetString(sku).ToLowerInvariant()));
        }

        return text.WrittenSpan;
    }
}
