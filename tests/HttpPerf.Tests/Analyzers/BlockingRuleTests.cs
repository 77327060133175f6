using HttpPerf.Analyzers;
using HttpPerf.Analyzers.CodeFixes;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.Tests.Infrastructure;

namespace HttpPerf.Tests.Analyzers;

/// <summary>
/// HP0009 on code written for these tests, not taken from the lesson's rung: each naive shape marked where it must fire,
/// the async twin of each beside it unmarked; then its fix, each output compared whole, and no fix outside an async function.
/// </summary>
[Trait(Kind.Name, Kind.Analyzers)]
[Lesson(Pitfalls.FrontendBlocking)]
public sealed class BlockingRuleTests
{
    private const string Usings = """
        using System;
        using System.IO;
        using System.Net.Http;
        using System.Text.Json;
        using System.Threading;
        using System.Threading.Tasks;
        using Microsoft.AspNetCore.Builder;
        using Microsoft.AspNetCore.Http;
        using Microsoft.AspNetCore.Server.Kestrel.Core;

        """;

    [Fact]
    public Task Flags_a_synchronous_wait_on_an_HttpClient_HttpContent_or_Stream_task_and_not_its_await() => RuleHarness.AnalyzeAsync<BlockingAnalyzer>(Usings + """
        public record Quote(string Symbol, decimal Bid);

        public class PriceFeed(HttpClient prices)
        {
            public string Raw(string symbol) => {|HP0009:prices.GetStringAsync($"/quotes/{symbol}").Result|};

            public HttpResponseMessage Send(HttpRequestMessage request)
            {
                var pending = prices.SendAsync(request);
                {|HP0009:pending.Wait()|};
                return {|HP0009:pending.Result|};
            }

            public byte[] Bytes(HttpResponseMessage response) => {|HP0009:response.Content.ReadAsByteArrayAsync().ConfigureAwait(false).GetAwaiter().GetResult()|};

            public int Chunk(Stream upstream, byte[] buffer) => {|HP0009:upstream.ReadAsync(buffer, 0, buffer.Length).GetAwaiter().GetResult()|};

            public void Flush(Stream upstream) => {|HP0009:upstream.FlushAsync().Wait()|};

            // The async twins.
            public Task<string> RawAsync(string symbol) => prices.GetStringAsync($"/quotes/{symbol}");

            public async Task<HttpResponseMessage> SendAsync(HttpRequestMessage request, CancellationToken ct) => await prices.SendAsync(request, ct);

            public async Task<byte[]> BytesAsync(HttpResponseMessage response) => await response.Content.ReadAsByteArrayAsync().ConfigureAwait(false);

            public async ValueTask<int> ChunkAsync(Stream upstream, Memory<byte> buffer) => await upstream.ReadAsync(buffer);

            // A task of something else, waited on: not this rule's.
            public int Other(Func<Task<int>> work) => work().Result;

            // A task already completed, read after the check: no wait.
            public int Done(Task<int> read) => read.IsCompletedSuccessfully ? read.Result : -1;
        }
        """);

    [Fact]
    public Task Flags_a_synchronous_read_of_an_HTTP_body_and_AllowSynchronousIO_and_not_their_async_twins() => RuleHarness.AnalyzeAsync<BlockingAnalyzer>(Usings + """
        public record Order(int Id);

        public class Orders(HttpClient shop)
        {
            public async Task<Order> Fetch(int id)
            {
                using var response = await shop.GetAsync($"/orders/{id}", HttpCompletionOption.ResponseHeadersRead);
                using var body = {|HP0009:response.Content.ReadAsStream()|};
                return JsonSerializer.Deserialize<Order>(body);
            }

            public async Task Save(HttpResponseMessage response, Stream file)
            {
                await using var body = await response.Content.ReadAsStreamAsync();
                {|HP0009:body.CopyTo(file)|};
            }

            public int FirstByte(HttpContext context) => {|HP0009:context.Request.Body.ReadByte()|};

            public int Peek(HttpRequest request, byte[] buffer)
            {
                var incoming = request.Body;
                return {|HP0009:incoming.Read(buffer, 0, buffer.Length)|};
            }

            // The async twins.
            public async Task<Order?> FetchAsync(int id, CancellationToken ct)
            {
                using var response = await shop.GetAsync($"/orders/{id}", HttpCompletionOption.ResponseHeadersRead, ct);
                await using var body = await response.Content.ReadAsStreamAsync(ct);
                return await JsonSerializer.DeserializeAsync<Order>(body, cancellationToken: ct);
            }

            public async Task SaveAsync(HttpResponseMessage response, Stream file, CancellationToken ct)
            {
                await using var body = await response.Content.ReadAsStreamAsync(ct);
                await body.CopyToAsync(file, ct);
            }

            public async Task<int> PeekAsync(HttpRequest request, byte[] buffer) => await request.Body.ReadAsync(buffer);

            // A file or a buffer read synchronously: no network behind it.
            public int FromFile(FileStream file, byte[] buffer) => file.Read(buffer, 0, buffer.Length);

            public int FromMemory(MemoryStream copy) => copy.ReadByte();
        }

        public static class Hosting
        {
            public static void Allowed(KestrelServerOptions options) => {|HP0009:options.AllowSynchronousIO = true|};

            public static void Kept(KestrelServerOptions options) => options.AllowSynchronousIO = false;
        }
        """);

    [Fact]
    public Task Result_and_GetResult_become_await_and_ReadAsStream_its_async_twin_in_an_async_method() => RuleHarness.FixAsync<BlockingAnalyzer, AwaitFix>("""
        using System.IO;
        using System.Net.Http;
        using System.Threading.Tasks;

        public class Inventory(HttpClient stock)
        {
            public async Task<int> Count(string sku)
            {
                var text = {|HP0009:stock.GetStringAsync($"/stock/{sku}").Result|};
                using var response = {|HP0009:stock.GetAsync($"/stock/{sku}/history").GetAwaiter().GetResult()|};
                using var body = {|HP0009:response.Content.ReadAsStream()|};
                return text.Length + (int){|HP0009:stock.GetByteArrayAsync("/stock").Result|}.Length;
            }
        }
        """, """
        using System.IO;
        using System.Net.Http;
        using System.Threading.Tasks;

        public class Inventory(HttpClient stock)
        {
            public async Task<int> Count(string sku)
            {
                var text = await stock.GetStringAsync($"/stock/{sku}");
                using var response = await stock.GetAsync($"/stock/{sku}/history");
                using var body = await response.Content.ReadAsStreamAsync();
                return text.Length + (int)(await stock.GetByteArrayAsync("/stock")).Length;
            }
        }
        """);

    [Fact]
    public Task No_fix_outside_an_async_function()
    {
        // The method returns a value, not a task: awaiting in it means changing its callers, no mechanical rewrite.
        const string Source = """
            using System.Net.Http;

            public class Inventory(HttpClient stock)
            {
                public string Count(string sku) => {|HP0009:stock.GetStringAsync($"/stock/{sku}").Result|};
            }
            """;
        return RuleHarness.FixAsync<BlockingAnalyzer, AwaitFix>(Source, Source);
    }
}
