using System.Buffers;
using System.Globalization;
using System.Text;
using System.Text.Json;

namespace Frontend.Api.CatalogClient;

/// <summary>
/// <see cref="ProductView.From"/>'s mapping, written field by field straight from a reader's current product
/// (<see cref="CatalogProductReader"/>, or the gRPC lesson's reader of a message: <see cref="ICatalogProductFields"/>)
/// into the same JSON a <see cref="ProductView"/> serializes to, with no view object or string per product: the
/// title, price and URL are composed as UTF-8 in one buffer reused for every product.
/// </summary>
public sealed class ProductViewWriter(Utf8JsonWriter json)
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

    private readonly ArrayBufferWriter<byte> _text = new(256);

    public void Write(ICatalogProductFields product)
    {
        json.WriteStartObject();
        json.WriteNumber(Id, product.Id);
        json.WriteString(Sku, product.Sku);
        json.WriteString(Title, TitleOf(product));
        json.WriteString(Summary, product.Description);
        json.WriteString(Brand, product.Brand);
        json.WriteString(Category, product.Category);
        json.WriteString(Price, PriceOf(product.Price));
        json.WriteString(Availability, product.Stock switch
        {
            0 => SoldOut,
            < 10 => LowStock,
            _ => InStock,
        });
        json.WriteString(Url, UrlOf(product.Sku));
        json.WriteEndObject();
    }

    /// <summary><c>$"{product.Brand} {product.Name}"</c>.</summary>
    private ReadOnlySpan<byte> TitleOf(ICatalogProductFields product)
    {
        _text.ResetWrittenCount();
        _text.Write(product.Brand);
        _text.Write(" "u8);
        _text.Write(product.Name);
        return _text.WrittenSpan;
    }

    /// <summary><c>$"EUR {price:0.00}"</c>, invariant culture.</summary>
    private ReadOnlySpan<byte> PriceOf(decimal price)
    {
        _text.ResetWrittenCount();
        _text.Write("EUR "u8);
        price.TryFormat(_text.GetSpan(64), out var written, "0.00", CultureInfo.InvariantCulture);
        _text.Advance(written);
        return _text.WrittenSpan;
    }

    /// <summary><c>$"/products/{sku.ToLowerInvariant()}"</c>: lowered byte by byte when ASCII (every SKU the Catalog makes), through a string otherwise.</summary>
    private ReadOnlySpan<byte> UrlOf(ReadOnlySpan<byte> sku)
    {
        _text.ResetWrittenCount();
        _text.Write("/products/"u8);
        if (Ascii.ToLower(sku, _text.GetSpan(sku.Length), out var written) == OperationStatus.Done)
        {
            _text.Advance(written);
        }
        else
        {
            _text.Write(Encoding.UTF8.GetBytes(Encoding.UTF8.GetString(sku).ToLowerInvariant()));
        }

        return _text.WrittenSpan;
    }
}
