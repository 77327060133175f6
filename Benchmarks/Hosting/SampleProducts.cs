using System.Text.Json;
using Catalog.Api.Data;
using Catalog.Api.Serialization;

namespace Benchmarks.Hosting;

/// <summary>Catalog-shaped products (about 300 bytes of JSON each, as the Catalog serves), made deterministically.</summary>
public static class SampleProducts
{
    public static List<Product> Create(int count) =>
        Enumerable.Range(1, count).Select(id => new Product(
            id,
            $"SKU-{id:D7}",
            $"Summit Merino Jacket {id % 1000:D3}",
            "Tested through a full season by our own guides before release. Built for long days outside and easy to repair in the field. This jacket comes in 4 colours.",
            "Northwind",
            "Apparel",
            new decimal(1_000 + (id * 37 % 49_000), 0, 0, false, 2),
            id % 400)).ToList();

    /// <summary>The JSON the Catalog's optimized writer produces for these products.</summary>
    public static byte[] Json(int count) =>
        JsonSerializer.SerializeToUtf8Bytes(Create(count), CatalogJsonContext.Default.ListProduct);
}
