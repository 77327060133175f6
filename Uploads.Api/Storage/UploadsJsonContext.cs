using System.Text.Json;
using System.Text.Json.Serialization;

namespace Uploads.Api.Storage;

[JsonSourceGenerationOptions(JsonSerializerDefaults.Web)]
[JsonSerializable(typeof(UploadReceipt))]
public sealed partial class UploadsJsonContext : JsonSerializerContext;
