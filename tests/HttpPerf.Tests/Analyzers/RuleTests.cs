using HttpPerf.Analyzers;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.Tests.Infrastructure;

namespace HttpPerf.Tests.Analyzers;

/// <summary>
/// Each rule on the shape its lesson's naive rung has (marked where it must fire), and on shapes that look close but
/// are not the pitfall (no mark: nothing may fire). docs/analyzers.md lists the rules.
/// </summary>
[Trait(Kind.Name, Kind.Analyzers)]
public sealed class RuleTests
{
    private const string Usings = """
        using System.Buffers;
        using System.Collections.Generic;
        using System.IO;
        using System.Net.Http;
        using System.Net.Http.Json;
        using System.Text;
        using System.Text.Json;
        using System.Threading;
        using System.Threading.Tasks;
        using Microsoft.AspNetCore.Builder;
        using Microsoft.AspNetCore.Http;
        using Microsoft.AspNetCore.Mvc;
        using Microsoft.Extensions.DependencyInjection;

        """;

    [Fact]
    [Lesson(Pitfalls.FrontendCatalogClient)]
    public Task CatalogClient_flags_a_string_or_bytes_read_whole_then_deserialized() => RuleHarness.AnalyzeAsync<CatalogClientAnalyzer>(Usings + """
        public record Product(int Id);
        public record Page(List<Product> Items, int Total);

        public class Client(HttpClient http)
        {
            public async Task<List<Product>> ViaLocal(CancellationToken ct)
            {
                using var response = await http.GetAsync("/products", HttpCompletionOption.ResponseHeadersRead, ct);
                string json = await response.Content.ReadAsStringAsync(ct);
                return {|HP0001:JsonSerializer.Deserialize<List<Product>>(json)|};
            }

            public async Task<List<Product>> Nested() =>
                {|HP0001:JsonSerializer.Deserialize<List<Product>>(await http.GetStringAsync("/products").ConfigureAwait(false))|};

            public async Task<List<Product>> Bytes() =>
                {|HP0001:JsonSerializer.Deserialize<List<Product>>(await http.GetByteArrayAsync("/products"))|};

            // A page of products: a list one level down.
            public async Task<Page> Paged(HttpResponseMessage response) =>
                {|HP0001:JsonSerializer.Deserialize<Page>(await response.Content.ReadAsStringAsync())|};

            public async Task<List<Product>> WithNewtonsoft(HttpResponseMessage response) =>
                {|HP0001:Newtonsoft.Json.JsonConvert.DeserializeObject<List<Product>>(await response.Content.ReadAsStringAsync())|};
        }
        """);

    [Fact]
    [Lesson(Pitfalls.FrontendCatalogClient)]
    public Task CatalogClient_flags_a_buffered_GetAsync_or_SendAsync_whose_content_is_deserialized() => RuleHarness.AnalyzeAsync<CatalogClientAnalyzer>(Usings + """
        public record Product(int Id);

        public class Client(HttpClient http)
        {
            public async Task<List<Product>> Get(CancellationToken ct)
            {
                using var response = await {|HP0001:http.GetAsync("/products", ct)|};
                return await response.Content.ReadFromJsonAsync<List<Product>>(ct);
            }

            public async Task<List<Product>> Send(CancellationToken ct)
            {
                var response = await {|HP0001:http.SendAsync(new HttpRequestMessage(HttpMethod.Get, "/products"), ct)|};
                await using var body = await response.Content.ReadAsStreamAsync(ct);
                return await JsonSerializer.DeserializeAsync<List<Product>>(body, cancellationToken: ct);
            }
        }
        """);

    [Fact]
    [Lesson(Pitfalls.FrontendCatalogClient)]
    public Task CatalogClient_leaves_streamed_reads_and_guarded_small_reads_alone() => RuleHarness.AnalyzeAsync<CatalogClientAnalyzer>(Usings + """
        public record Product(int Id);
        public record Health(string Status);

        public class Client(HttpClient http)
        {
            // The fix: at the headers, parsed from the stream.
            public async Task<List<Product>> Streamed(CancellationToken ct)
            {
                using var response = await http.GetAsync("/products", HttpCompletionOption.ResponseHeadersRead, ct);
                return await response.Content.ReadFromJsonAsync<List<Product>>(ct);
            }

            // A small answer read as a string, its size checked first.
            public async Task<Health> Guarded(CancellationToken ct)
            {
                using var response = await http.GetAsync("/health", HttpCompletionOption.ResponseHeadersRead, ct);
                if (response.Content.Headers.ContentLength > 4096)
                {
                    throw new InvalidDataException("too large");
                }

                var json = await response.Content.ReadAsStringAsync(ct);
                return JsonSerializer.Deserialize<Health>(json);
            }

            // A string that is not parsed.
            public Task<string> Text() => http.GetStringAsync("/robots.txt");

            // One small object, nothing in it that grows (outside code's false positives: a policy answer, a user).
            public async Task<Health> Small()
            {
                using var response = await http.GetAsync("/health");
                return await response.Content.ReadFromJsonAsync<Health>();
            }

            public async Task<Health> SmallString() => JsonSerializer.Deserialize<Health>(await http.GetStringAsync("/health"));

            // GetAsync whose content is not deserialized.
            public async Task<bool> Exists()
            {
                using var response = await http.GetAsync("/products/1");
                return response.IsSuccessStatusCode;
            }
        }
        """);

    [Fact]
    [Lesson(Pitfalls.CatalogSerialization)]
    public Task Serialization_flags_buffering_Newtonsoft_formatters_and_a_list_written_as_one_string() => RuleHarness.AnalyzeAsync<SerializationAnalyzer>(Usings + """
        public record Product(int Id);

        public static class Setup
        {
            public static void Formatters(IServiceCollection services) => {|HP0002:services.AddMvc().AddNewtonsoftJson()|};

            public static async Task Write(HttpContext context, List<Product> products)
            {
                var json = {|HP0002:JsonSerializer.Serialize(products)|};
                await context.Response.WriteAsync(json);
            }

            public static IResult Content(Product[] products) => Results.Content({|HP0002:Newtonsoft.Json.JsonConvert.SerializeObject(products)|}, "application/json");
        }
        """);

    [Fact]
    [Lesson(Pitfalls.CatalogSerialization)]
    public Task Serialization_leaves_unbuffered_formatters_one_object_and_serialized_strings_not_written_alone() => RuleHarness.AnalyzeAsync<SerializationAnalyzer>(Usings + """
        public record Product(int Id);

        public static class Setup
        {
            public static void Formatters(IServiceCollection services)
            {
                services.AddMvc(o => o.SuppressOutputFormatterBuffering = true).AddNewtonsoftJson();
            }

            public static Task One(HttpContext context, Product product) => context.Response.WriteAsync(JsonSerializer.Serialize(product));

            public static Task Streamed(HttpContext context, IAsyncEnumerable<Product> products) => context.Response.WriteAsJsonAsync(products);

            public static string Cached(List<Product> products) => JsonSerializer.Serialize(products);
        }
        """);

    [Fact]
    [Lesson(Pitfalls.CatalogWriteStrategy)]
    public Task WriteStrategy_flags_a_flush_on_every_pass_of_a_loop() => RuleHarness.AnalyzeAsync<WriteStrategyAnalyzer>(Usings + """
        public static class Export
        {
            public static async Task Rows(HttpContext context, IAsyncEnumerable<string> rows)
            {
                await foreach (var row in rows)
                {
                    await context.Response.WriteAsync(row);
                    await {|HP0003:context.Response.Body.FlushAsync()|};
                }
            }

            public static async Task Writer(HttpResponse response, List<string> rows)
            {
                await using var writer = new StreamWriter(response.Body);
                for (var i = 0; i < rows.Count; i++)
                {
                    await writer.WriteLineAsync(rows[i]);
                    await {|HP0003:writer.FlushAsync()|};
                }
            }
        }
        """);

    [Fact]
    [Lesson(Pitfalls.CatalogWriteStrategy)]
    public Task WriteStrategy_leaves_a_conditional_flush_a_flush_after_the_loop_and_server_sent_events_alone() => RuleHarness.AnalyzeAsync<WriteStrategyAnalyzer>(Usings + """
        public static class Export
        {
            public static async Task Coalesced(HttpContext context, IAsyncEnumerable<string> rows)
            {
                var writer = context.Response.BodyWriter;
                await foreach (var row in rows)
                {
                    Encoding.UTF8.GetBytes(row, writer);
                    if (writer.UnflushedBytes >= 64 * 1024)
                    {
                        await writer.FlushAsync();
                    }
                }

                await writer.FlushAsync();
            }

            public static async Task Events(HttpContext context, IAsyncEnumerable<string> events)
            {
                context.Response.ContentType = "text/event-stream";
                await foreach (var e in events)
                {
                    await context.Response.WriteAsync($"data: {e}\n\n");
                    await context.Response.Body.FlushAsync();
                }
            }

            // A paced stream: each line as it happens, waiting between them.
            public static async Task Paced(HttpContext context, List<string> lines)
            {
                foreach (var line in lines)
                {
                    await context.Response.WriteAsync(line);
                    await context.Response.Body.FlushAsync();
                    await Task.Delay(200);
                }
            }

            // Not an HTTP response: a file, flushed per line on purpose (a journal).
            public static async Task Journal(Stream file, List<byte[]> lines)
            {
                foreach (var line in lines)
                {
                    await file.WriteAsync(line);
                    await file.FlushAsync();
                }
            }
        }
        """);

    [Fact]
    [Lesson(Pitfalls.UploadsReader)]
    public Task UploadsReader_flags_bound_files_and_a_form_read_for_its_files() => RuleHarness.AnalyzeAsync<UploadsReaderAnalyzer>(Usings + """
        public static class Uploads
        {
            public static void Map(WebApplication app)
            {
                app.MapPost("/one", (IFormFile {|HP0004:file|}) => Results.Ok(file.Length));
                app.MapPost("/many", (IFormFileCollection {|HP0004:files|}) => Results.Ok(files.Count));
                app.MapPost("/form", ([FromForm] UploadForm {|HP0004:form|}) => Results.Ok(form.Title));
                app.MapPost("/todo", ([AsParameters] NewTodo {|HP0004:todo|}) => Results.Ok(todo.Name));
            }

            public static async Task<int> Read(HttpRequest request)
            {
                var form = await {|HP0004:request.ReadFormAsync()|};
                return form.Files.Count;
            }

            public static int Property(HttpContext context) => {|HP0004:context.Request.Form|}.Files.Count;
        }

        public class UploadForm
        {
            public string? Title { get; set; }
            public IFormFile? Document { get; set; }
        }

        public record struct NewTodo(string Name, IFormFile? Attachment);

        public class UploadsController : ControllerBase
        {
            public IActionResult Upload(List<IFormFile> {|HP0004:files|}) => Ok(files.Count);
        }
        """);

    [Fact]
    [Lesson(Pitfalls.UploadsReader)]
    public Task UploadsReader_leaves_a_form_read_for_its_fields_and_streamed_multipart_alone() => RuleHarness.AnalyzeAsync<UploadsReaderAnalyzer>(Usings + """
        public static class Forms
        {
            public static async Task<string> Login(HttpRequest request)
            {
                var form = await request.ReadFormAsync();
                return form["user"].ToString();
            }

            public static void Map(WebApplication app) => app.MapPost("/upload", async (HttpRequest request) =>
            {
                var reader = new Microsoft.AspNetCore.WebUtilities.MultipartReader("boundary", request.Body);
                var sections = 0;
                while (await reader.ReadNextSectionAsync() is not null)
                {
                    sections++;
                }

                return Results.Ok(sections);
            });
        }
        """);

    [Fact]
    [Lesson(Pitfalls.UploadsDownload)]
    public Task Download_flags_a_file_read_whole_and_sent() => RuleHarness.AnalyzeAsync<DownloadAnalyzer>(Usings + """
        public static class Downloads
        {
            public static async Task<IResult> Typed(string path)
            {
                var bytes = await {|HP0005:File.ReadAllBytesAsync(path)|};
                return TypedResults.Bytes(bytes, "application/octet-stream");
            }

            public static IResult Pdf(string path) => Results.File({|HP0005:File.ReadAllBytes(path)|}, "application/pdf");

            public static async Task Body(HttpContext context, string path) =>
                await context.Response.Body.WriteAsync(await {|HP0005:File.ReadAllBytesAsync(path)|});

            // The array in a MemoryStream is the array still.
            public static async Task<IResult> Wrapped(string path)
            {
                var bytes = await {|HP0005:File.ReadAllBytesAsync(path)|};
                return Results.Stream(new MemoryStream(bytes), "application/octet-stream");
            }
        }

        public class FilesController : ControllerBase
        {
            public IActionResult Get(string path) => File({|HP0005:System.IO.File.ReadAllBytes(path)|}, "image/png");
        }
        """);

    [Fact]
    [Lesson(Pitfalls.UploadsDownload)]
    public Task Download_leaves_path_results_and_bytes_not_sent_alone() => RuleHarness.AnalyzeAsync<DownloadAnalyzer>(Usings + """
        public static class Downloads
        {
            public static IResult Path1(string path) => Results.File(path, "application/octet-stream", enableRangeProcessing: true);

            public static async Task<int> Hash(string path) => (await File.ReadAllBytesAsync(path)).Length;

            public static IResult Opened(string path) => Results.Stream(File.OpenRead(path), "application/octet-stream");

            // A MemoryStream over bytes that are parsed, not sent.
            public static async Task<long> Parsed(string path)
            {
                using var stream = new MemoryStream(await File.ReadAllBytesAsync(path));
                using var document = await System.Text.Json.JsonDocument.ParseAsync(stream);
                return document.RootElement.GetArrayLength();
            }
        }
        """);

    [Fact]
    [Lesson(Pitfalls.GatewayBuffering)]
    public Task Buffering_flags_a_middleware_that_holds_bodies() => RuleHarness.AnalyzeAsync<BufferingAnalyzer>(Usings + """
        public sealed class LoggingMiddleware(RequestDelegate next)
        {
            public async Task InvokeAsync(HttpContext context)
            {
                {|HP0006:context.Request.EnableBuffering()|};
                using var copy = new MemoryStream();
                await {|HP0006:context.Request.Body.CopyToAsync(copy)|};
                context.Request.Body.Position = 0;

                var original = context.Response.Body;
                using var captured = new MemoryStream();
                {|HP0006:context.Response.Body = captured|};
                await next(context);
                captured.Position = 0;
                await captured.CopyToAsync(original);
            }
        }

        public static class Inline
        {
            public static void Use(WebApplication app) => app.Use(async (context, next) =>
            {
                {|HP0006:context.Request.EnableBuffering()|};
                await next(context);
            });
        }
        """);

    [Fact]
    [Lesson(Pitfalls.GatewayBuffering)]
    public Task Buffering_leaves_a_streaming_middleware_and_an_endpoint_that_reads_its_own_body_alone() => RuleHarness.AnalyzeAsync<BufferingAnalyzer>(Usings + """
        public sealed class TimingMiddleware(RequestDelegate next)
        {
            public async Task InvokeAsync(HttpContext context)
            {
                var started = System.Diagnostics.Stopwatch.GetTimestamp();
                await next(context);
                context.Response.Headers["x-elapsed"] = System.Diagnostics.Stopwatch.GetElapsedTime(started).ToString();
            }
        }

        public static class Endpoints
        {
            // An endpoint that needs its own small body twice: one request, not every one.
            public static async Task<IResult> Webhook(HttpRequest request)
            {
                request.EnableBuffering();
                using var copy = new MemoryStream();
                await request.Body.CopyToAsync(copy);
                return Results.Ok(copy.Length);
            }
        }
        """);

    [Fact]
    [Lesson(Pitfalls.FrontendReplicas)]
    public Task Replicas_flags_the_template_defaults_as_info_and_leaves_hedging_and_undiscovered_clients_alone() => RuleHarness.AnalyzeAsync<ReplicasAnalyzer>(Usings + """
        public static class Defaults
        {
            public static void Template(IServiceCollection services) => services.ConfigureHttpClientDefaults(http =>
            {
                {|HP0007:http.AddStandardResilienceHandler()|};
                http.AddServiceDiscovery();
            });

            public static void Hedged(IServiceCollection services) => services.ConfigureHttpClientDefaults(http =>
            {
                http.AddStandardHedgingHandler();
                http.AddServiceDiscovery();
            });

            public static void External(IServiceCollection services) =>
                services.AddHttpClient("payments", c => c.BaseAddress = new System.Uri("https://payments.example")).AddStandardResilienceHandler();
        }
        """);

    [Fact]
    [Lesson(Pitfalls.FrontendGrpc)]
    public Task Grpc_flags_a_receive_limit_raised_or_removed_and_leaves_the_default_and_lower_alone() => RuleHarness.AnalyzeAsync<GrpcAnalyzer>(Usings + """
        using Grpc.AspNetCore.Server;
        using Grpc.Net.Client;

        public sealed class Catalog;

        public static class Channels
        {
            public static GrpcChannelOptions Raised() => new() { {|HP0008:MaxReceiveMessageSize = 64 * 1024 * 1024|} };

            public static void Unlimited(GrpcChannelOptions options) => {|HP0008:options.MaxReceiveMessageSize = null|};

            public static void FromSettings(GrpcChannelOptions options, int limit) => {|HP0008:options.MaxReceiveMessageSize = limit|};

            public static void Server(GrpcServiceOptions options) => {|HP0008:options.MaxReceiveMessageSize = 16 * 1024 * 1024|};

            public static void OneService(GrpcServiceOptions<Catalog> options) => {|HP0008:options.MaxReceiveMessageSize = 32 * 1024 * 1024|};

            public static GrpcChannelOptions Default() => new() { MaxReceiveMessageSize = 4 * 1024 * 1024 };

            public static void Lowered(GrpcServiceOptions options) => options.MaxReceiveMessageSize = 1024 * 1024;

            public static void SendLimit(GrpcChannelOptions options) => options.MaxSendMessageSize = null;
        }
        """);
}
