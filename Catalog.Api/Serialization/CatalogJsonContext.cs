using System.Text.Json;
using System.Text.Json.Serialization;
using Catalog.Api.Data;

namespace Catalog.Api.Serialization;

/// <summary>Source-generated metadata: the same camelCase shape MVC's Newtonsoft formatter writes.</summary>
[JsonSourceGenerationOptions(JsonSerializerDefaults.Web)]
[JsonSerializable(typeof(IAsyncEnumerable<Product>))]
[JsonSerializable(typeof(List<Product>))]
[JsonSerializable(typeof(Product))]
public sealed partial class CatalogJsonContext : JsonSerializerContext;
