using System.Globalization;
using Catalog.Api.Data;

namespace Catalog.Api.WriteStrategy;

/// <summary>The export's format (RFC 4180), shared by both writers so they send the same bytes.</summary>
public static class CsvRow
{
    public const string ContentType = "text/csv; charset=utf-8";

    public const string Header = "id,sku,brand,name,category,price,stock\n";

    public static string Format(Product p) =>
        string.Create(CultureInfo.InvariantCulture, $"{p.Id},{p.Sku},{Quote(p.Brand)},{Quote(p.Name)},{Quote(p.Category)},{p.Price:0.00},{p.Stock}\n");

    private static string Quote(string field) =>
        field.AsSpan().IndexOfAny(",\"\n\r") < 0 ? field : $"\"{field.Replace("\"", "\"\"", StringComparison.Ordinal)}\"";
}
