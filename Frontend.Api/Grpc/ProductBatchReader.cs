using Frontend.Api.CatalogClient;

namespace Frontend.Api.Grpc;

/// <summary>
/// A <c>ProductList</c> message (catalog.proto) read one product at a time from its bytes, in the protobuf wire format:
/// each field is a tag (field number and wire type), then a varint or a length and that many bytes. After
/// <see cref="Read"/>, the fields are the current product's, the text ones as the UTF-8 in the message itself: no
/// object or string per product. A field this reader does not know is skipped, as protobuf's own parsers do, so the
/// Catalog may add fields; a field left out reads as its default (proto3: 0, empty).
/// </summary>
public sealed class ProductBatchReader(ProductBatch batch) : ICatalogProductFields
{
    // Tags: field number << 3 | wire type (0 varint, 1 64-bit, 2 length-delimited, 5 32-bit).
    private const uint ProductsTag = 1 << 3 | 2;
    private const uint IdTag = 1 << 3, SkuTag = 2 << 3 | 2, NameTag = 3 << 3 | 2, DescriptionTag = 4 << 3 | 2,
        BrandTag = 5 << 3 | 2, CategoryTag = 6 << 3 | 2, PriceCentsTag = 7 << 3, StockTag = 8 << 3;

    private int _position;
    private Range _sku, _name, _description, _brand, _category;
    private long _priceCents;

    public int Id { get; private set; }

    public ReadOnlySpan<byte> Sku => batch.Bytes[_sku];

    public ReadOnlySpan<byte> Name => batch.Bytes[_name];

    public ReadOnlySpan<byte> Description => batch.Bytes[_description];

    public ReadOnlySpan<byte> Brand => batch.Bytes[_brand];

    public ReadOnlySpan<byte> Category => batch.Bytes[_category];

    /// <summary>The price in cents, with two decimals, as the JSON's <c>price</c>: made from its digits, not divided (a decimal division is slow).</summary>
    public decimal Price
    {
        get
        {
            var cents = _priceCents < 0 ? (ulong)-(_priceCents + 1) + 1 : (ulong)_priceCents;
            return new decimal((int)(uint)cents, (int)(uint)(cents >> 32), 0, _priceCents < 0, scale: 2);
        }
    }

    public int Stock { get; private set; }

    /// <summary>Moves to the message's next product; false after its last.</summary>
    public bool Read()
    {
        var message = batch.Bytes;
        while (_position < message.Length)
        {
            var tag = (uint)ReadVarint(message, ref _position);
            if (tag == ProductsTag)
            {
                var end = EndOf(message, ref _position);
                ReadProduct(message, end);
                return true;
            }

            Skip(tag, message, ref _position);
        }

        return false;
    }

    private void ReadProduct(ReadOnlySpan<byte> message, int end)
    {
        (Id, _sku, _name, _description, _brand, _category, _priceCents, Stock) = (0, default, default, default, default, default, 0, 0);
        while (_position < end)
        {
            var tag = (uint)ReadVarint(message, ref _position);
            switch (tag)
            {
                case IdTag: Id = (int)ReadVarint(message, ref _position); break;
                case SkuTag: _sku = Text(message, ref _position); break;
                case NameTag: _name = Text(message, ref _position); break;
                case DescriptionTag: _description = Text(message, ref _position); break;
                case BrandTag: _brand = Text(message, ref _position); break;
                case CategoryTag: _category = Text(message, ref _position); break;
                case PriceCentsTag: _priceCents = (long)ReadVarint(message, ref _position); break;
                case StockTag: Stock = (int)ReadVarint(message, ref _position); break;
                default: Skip(tag, message, ref _position); break;
            }
        }

        if (_position != end)
        {
            throw Malformed("a product's fields overrun its length");
        }
    }

    private static Range Text(ReadOnlySpan<byte> message, ref int position)
    {
        var start = position;
        var end = EndOf(message, ref start);
        position = end;
        return start..end;
    }

    /// <summary>Reads a length at <paramref name="position"/>, moves past it, and returns where that many bytes end.</summary>
    private static int EndOf(ReadOnlySpan<byte> message, ref int position)
    {
        var length = ReadVarint(message, ref position);
        return length <= (ulong)(message.Length - position) ? position + (int)length : throw Malformed("a length runs past the message");
    }

    private static void Skip(uint tag, ReadOnlySpan<byte> message, ref int position)
    {
        switch (tag & 7)
        {
            case 0: ReadVarint(message, ref position); break;
            case 1: position = Fixed(message, position, 8); break;
            case 2: position = EndOf(message, ref position); break;
            case 5: position = Fixed(message, position, 4); break;
            default: throw Malformed($"wire type {tag & 7}");
        }
    }

    private static int Fixed(ReadOnlySpan<byte> message, int position, int size) =>
        size <= message.Length - position ? position + size : throw Malformed("a fixed-size field runs past the message");

    private static ulong ReadVarint(ReadOnlySpan<byte> message, ref int position)
    {
        ulong value = 0;
        for (var shift = 0; shift < 64 && position < message.Length; shift += 7)
        {
            var b = message[position++];
            value |= (ulong)(b & 0x7F) << shift;
            if (b < 0x80)
            {
                return value;
            }
        }

        throw Malformed("a varint is cut short or longer than 10 bytes");
    }

    private static InvalidDataException Malformed(string what) => new($"The Catalog's ProductList message is malformed: {what}.");
}
