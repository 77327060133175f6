namespace Frontend.Api.CatalogClient;

/// <summary>
/// The current product of a reader that makes no object per product: its text fields as UTF-8 in the reader's own
/// buffer, valid until the reader moves on. What <see cref="ProductViewWriter"/> writes a view from.
/// </summary>
public interface ICatalogProductFields
{
    int Id { get; }

    ReadOnlySpan<byte> Sku { get; }

    ReadOnlySpan<byte> Name { get; }

    ReadOnlySpan<byte> Description { get; }

    ReadOnlySpan<byte> Brand { get; }

    ReadOnlySpan<byte> Category { get; }

    decimal Price { get; }

    int Stock { get; }
}
