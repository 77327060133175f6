using System.Buffers;
using Catalog.Api.Data;
using Grpc.Core;

namespace Catalog.Api.Grpc;

/// <summary>
/// A <c>ProductList</c> message (catalog.proto) encoded straight from SQLite's rows in the protobuf wire format: per
/// product a tag and a length, then each field as a tag and a varint, or a tag, a length and the UTF-8 SQLite holds.
/// No product object, no string, no transcoding: the Catalog.Serialization lesson's optimized rung, in protobuf. The
/// bytes are those Google.Protobuf writes for the same message (fields in number order, defaults left out), which a
/// test holds it to. The buffer is pooled, reused for the next message, and given back on dispose.
/// </summary>
public sealed class EncodedProductList : IDisposable
{
    // Tags: field number << 3 | wire type (0 varint, 2 length-delimited).
    private const byte ProductsTag = 1 << 3 | 2;
    private const byte IdTag = 1 << 3, SkuTag = 2 << 3 | 2, NameTag = 3 << 3 | 2, DescriptionTag = 4 << 3 | 2,
        BrandTag = 5 << 3 | 2, CategoryTag = 6 << 3 | 2, PriceCentsTag = 7 << 3, StockTag = 8 << 3;

    private byte[] _buffer = ArrayPool<byte>.Shared.Rent(256 * 1024);
    private int _length;

    /// <summary>Writes the message's bytes as gRPC's payload; there is nothing to read one into (a client reads a <c>ProductList</c>).</summary>
    public static Marshaller<EncodedProductList> Marshaller { get; } = Marshallers.Create<EncodedProductList>(
        static (list, context) =>
        {
            context.SetPayloadLength(list._length);
            context.GetBufferWriter().Write(list._buffer.AsSpan(0, list._length));
            context.Complete();
        },
        static _ => throw new NotSupportedException("The Catalog only writes product lists."));

    /// <summary>Products in the message.</summary>
    public int Count { get; private set; }

    public ReadOnlySpan<byte> Bytes => _buffer.AsSpan(0, _length);

    /// <summary>Appends the reader's current row as one more product.</summary>
    public void Add(ProductRows rows)
    {
        ReadOnlySpan<byte> sku = rows.Sku, name = rows.Name, description = rows.Description, brand = rows.Brand, category = rows.Category;
        long id = rows.Id, priceCents = rows.PriceCents, stock = rows.Stock;
        var size = VarintField(id) + TextField(sku) + TextField(name) + TextField(description) + TextField(brand) + TextField(category)
            + VarintField(priceCents) + VarintField(stock);
        Ensure(1 + VarintSize((ulong)size) + size);

        _buffer[_length++] = ProductsTag;
        WriteVarint((ulong)size);
        WriteVarint(IdTag, id);
        WriteText(SkuTag, sku);
        WriteText(NameTag, name);
        WriteText(DescriptionTag, description);
        WriteText(BrandTag, brand);
        WriteText(CategoryTag, category);
        WriteVarint(PriceCentsTag, priceCents);
        WriteVarint(StockTag, stock);
        Count++;
    }

    /// <summary>Empties the message for the next batch, keeping its buffer.</summary>
    public void Clear() => (_length, Count) = (0, 0);

    public void Dispose()
    {
        ArrayPool<byte>.Shared.Return(_buffer);
        _buffer = [];
    }

    // proto3 leaves a field at its default (0, empty) out; a negative int is ten bytes, as its 64-bit two's complement.
    private static int VarintField(long value) => value == 0 ? 0 : 1 + VarintSize((ulong)value);

    private static int TextField(ReadOnlySpan<byte> text) => text.IsEmpty ? 0 : 1 + VarintSize((ulong)text.Length) + text.Length;

    private static int VarintSize(ulong value) => (70 - (int)ulong.LeadingZeroCount(value | 1)) / 7;

    private void WriteVarint(byte tag, long value)
    {
        if (value != 0)
        {
            _buffer[_length++] = tag;
            WriteVarint((ulong)value);
        }
    }

    private void WriteText(byte tag, ReadOnlySpan<byte> text)
    {
        if (!text.IsEmpty)
        {
            _buffer[_length++] = tag;
            WriteVarint((ulong)text.Length);
            text.CopyTo(_buffer.AsSpan(_length));
            _length += text.Length;
        }
    }

    private void WriteVarint(ulong value)
    {
        for (; value >= 0x80; value >>= 7)
        {
            _buffer[_length++] = (byte)(value | 0x80);
        }

        _buffer[_length++] = (byte)value;
    }

    private void Ensure(int more)
    {
        if (_buffer.Length - _length < more)
        {
            var larger = ArrayPool<byte>.Shared.Rent(Math.Max(_buffer.Length * 2, _length + more));
            Bytes.CopyTo(larger);
            ArrayPool<byte>.Shared.Return(_buffer);
            _buffer = larger;
        }
    }
}
