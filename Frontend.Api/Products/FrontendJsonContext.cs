using System.Text.Json;
using System.Text.Json.Serialization;
using Frontend.Api.CatalogClient;

namespace Frontend.Api.Products;

[JsonSourceGenerationOptions(JsonSerializerDefaults.Web)]
[JsonSerializable(typeof(List<CatalogProduct>))]
[JsonSerializable(typeof(List<ProductView>))]
[JsonSerializable(typeof(IAsyncEnumerable<ProductView>))]
public sealed partial class FrontendJsonContext : JsonSerializerContext;
