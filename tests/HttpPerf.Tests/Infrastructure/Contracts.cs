namespace HttpPerf.Tests.Infrastructure;

/// <summary>The public JSON shapes, written down independently of the services' own types.</summary>
public sealed record CatalogProduct(int Id, string Sku, string Name, string Description, string Brand, string Category, decimal Price, int Stock);

public sealed record ProductView(int Id, string Sku, string Title, string Summary, string Brand, string Category, string Price, string Availability, string Url);

public sealed record UploadReceipt(string Id, long Size, string Sha256, string FileName, string ContentType);
