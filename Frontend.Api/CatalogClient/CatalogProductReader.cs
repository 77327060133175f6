using System.Buffers;
using System.IO.Pipelines;
using System.Text.Json;

namespace Frontend.Api.CatalogClient;

/// <summary>
/// The Catalog's JSON array read one product at a time off the response stream with <see cref="Utf8JsonReader"/>,
/// and no object or string per product: after <see cref="ReadAsync"/>, the fields are the current product's, the
/// text ones as unescaped UTF-8 in a buffer this reader reuses (valid until the next read). Each pipe read is parsed
/// product after product, in one pass, until a product has not all arrived; that one is parsed again from its start
/// once more bytes are in, from the reader state saved after the product before it.
/// </summary>
public sealed class CatalogProductReader(Stream body) : ICatalogProductFields, IAsyncDisposable
{
    private readonly PipeReader _pipe = PipeReader.Create(body, new StreamPipeReaderOptions(bufferSize: 64 * 1024));
    private ReadOnlySequence<byte> _buffer; // the part of the pipe's last read not parsed yet
    private bool _holding; // a pipe read not yet advanced past
    private bool _completed;
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
            if (_holding)
            {
                if (TryReadProduct(ref _buffer, _completed))
                {
                    return !_arrayEnded;
                }

                if (_completed)
                {
                    throw new JsonException("The Catalog's JSON ended before its array did.");
                }

                _pipe.AdvanceTo(_buffer.Start, _buffer.End); // keep the partial product, wait for more
                _holding = false;
            }

            var result = await _pipe.ReadAsync(cancellationToken);
            (_buffer, _completed, _holding) = (result.Buffer, result.IsCompleted, true);
        }

        return false;
    }

    public async ValueTask DisposeAsync()
    {
        if (_holding)
        {
            _pipe.AdvanceTo(_buffer.Start);
        }

        await _pipe.CompleteAsync();
    }

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

        // Any read that runs out of bytes returns false: nothing is advanced, and the product is read again whole.
        _textLength = 0;
        while (json.Read())
        {
            if (json.TokenType == JsonTokenType.EndObject)
            {
                Advance(ref buffer, ref json);
                return true;
            }

            var property = json.ValueTextEquals("id"u8) ? 0
                : json.ValueTextEquals("sku"u8) ? 1
                : json.ValueTextEquals("name"u8) ? 2
                : json.ValueTextEquals("description"u8) ? 3
                : json.ValueTextEquals("brand"u8) ? 4
                : json.ValueTextEquals("category"u8) ? 5
                : json.ValueTextEquals("price"u8) ? 6
                : json.ValueTextEquals("stock"u8) ? 7
                : -1;
            if (!json.Read())
            {
                return false;
            }

            switch (property)
            {
                case 0: Id = json.GetInt32(); break;
                case 1: _sku = CopyText(ref json); break;
                case 2: _name = CopyText(ref json); break;
                case 3: _description = CopyText(ref json); break;
                case 4: _brand = CopyText(ref json); break;
                case 5: _category = CopyText(ref json); break;
                case 6: Price = json.GetDecimal(); break;
                case 7: Stock = json.GetInt32(); break;
                default:
                    if (!json.TrySkip())
                    {
                        return false;
                    }

                    break;
            }
        }

        return false;
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
