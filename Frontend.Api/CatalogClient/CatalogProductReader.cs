using System.Buffers;
using System.IO.Pipelines;
using System.Text.Json;

namespace Frontend.Api.CatalogClient;

/// <summary>
/// The Catalog's JSON array read one product at a time off the response stream with <see cref="Utf8JsonReader"/>,
/// and no object or string per product: after <see cref="ReadAsync"/>, the fields are the current product's, the
/// text ones as unescaped UTF-8 in a buffer this reader reuses (valid until the next read). A product is parsed
/// only once all of it has arrived; until then the pipe keeps the partial bytes and reads more.
/// </summary>
public sealed class CatalogProductReader(Stream body) : IAsyncDisposable
{
    private readonly PipeReader _pipe = PipeReader.Create(body, new StreamPipeReaderOptions(bufferSize: 64 * 1024));
    private JsonReaderState _state;
    private bool _arrayEnded;
    private byte[] _text = new byte[1024];
    private int _textLength;
    private Range _sku, _name, _description, _brand, _category;

    public int Id { get; private set; }

    public decimal Price { get; private set; }

    public int Stock { get; private set; }

    public ReadOnlySpan<byte> Sku => _text.AsSpan(_sku);

    public ReadOnlySpan<byte> Name => _text.AsSpan(_name);

    public ReadOnlySpan<byte> Description => _text.AsSpan(_description);

    public ReadOnlySpan<byte> Brand => _text.AsSpan(_brand);

    public ReadOnlySpan<byte> Category => _text.AsSpan(_category);

    /// <summary>Moves to the next product; false after the array's end.</summary>
    public async ValueTask<bool> ReadAsync(CancellationToken cancellationToken)
    {
        while (!_arrayEnded)
        {
            var result = await _pipe.ReadAsync(cancellationToken);
            var buffer = result.Buffer;
            if (TryReadProduct(ref buffer, result.IsCompleted))
            {
                _pipe.AdvanceTo(buffer.Start);
                return !_arrayEnded;
            }

            if (result.IsCompleted)
            {
                throw new JsonException("The Catalog's JSON ended before its array did.");
            }

            _pipe.AdvanceTo(buffer.Start, buffer.End); // keep the partial product, wait for more
        }

        return false;
    }

    public ValueTask DisposeAsync() => _pipe.CompleteAsync();

    /// <summary>Reads the next whole product (or the array's end) from <paramref name="buffer"/>, which it then starts after; false if it has not all arrived.</summary>
    private bool TryReadProduct(ref ReadOnlySequence<byte> buffer, bool isFinalBlock)
    {
        var json = new Utf8JsonReader(buffer, isFinalBlock, _state);
        if (!json.Read())
        {
            return false;
        }

        if (json.TokenType == JsonTokenType.StartArray && !json.Read())
        {
            // Only the array's start has arrived: take it, so the next read starts at the first product.
            Advance(ref buffer, ref json);
            return false;
        }

        if (json.TokenType == JsonTokenType.EndArray)
        {
            _arrayEnded = true;
            Advance(ref buffer, ref json);
            return true;
        }

        if (json.TokenType != JsonTokenType.StartObject)
        {
            throw new JsonException($"Expected a product object, found {json.TokenType}.");
        }

        var whole = json;
        if (!whole.TrySkip())
        {
            return false;
        }

        _textLength = 0;
        while (json.Read() && json.TokenType == JsonTokenType.PropertyName)
        {
            var property = json;
            json.Read();
            if (property.ValueTextEquals("id"u8)) Id = json.GetInt32();
            else if (property.ValueTextEquals("sku"u8)) _sku = CopyText(ref json);
            else if (property.ValueTextEquals("name"u8)) _name = CopyText(ref json);
            else if (property.ValueTextEquals("description"u8)) _description = CopyText(ref json);
            else if (property.ValueTextEquals("brand"u8)) _brand = CopyText(ref json);
            else if (property.ValueTextEquals("category"u8)) _category = CopyText(ref json);
            else if (property.ValueTextEquals("price"u8)) Price = json.GetDecimal();
            else if (property.ValueTextEquals("stock"u8)) Stock = json.GetInt32();
            else json.Skip();
        }

        Advance(ref buffer, ref json);
        return true;
    }

    private void Advance(ref ReadOnlySequence<byte> buffer, ref Utf8JsonReader json)
    {
        _state = json.CurrentState;
        buffer = buffer.Slice(json.Position);
    }

    private Range CopyText(ref Utf8JsonReader json)
    {
        var escapedLength = json.HasValueSequence ? checked((int)json.ValueSequence.Length) : json.ValueSpan.Length;
        if (_text.Length - _textLength < escapedLength)
        {
            Array.Resize(ref _text, Math.Max(_text.Length * 2, _textLength + escapedLength));
        }

        var start = _textLength;
        _textLength += json.CopyString(_text.AsSpan(start)); // unescaped: never longer than escaped
        return start.._textLength;
    }
}
