using System.Text.Json;
using System.Text.Json.Serialization;

namespace Frontend.Api.CatalogClient;

[JsonSourceGenerationOptions(JsonSerializerDefaults.Web)]
[JsonSerializable(typeof(List<CatalogProduct>))]
[JsonSerializable(typeof(List<ProductView>))]
[JsonSerializable(typeof(IAsyncEnumerable<ProductView>))]
public sealed partial class FrontendJsonContext : JsonSerializerContext;
