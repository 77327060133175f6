using HttpPerf.Analyzers;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.Tests.Infrastructure;
using HttpPerf.Analyzers.CodeFixes;

namespace HttpPerf.Tests.Analyzers;

/// <summary>HP0001's two fixes, each output compared whole; and no fix where the rewrite would not be safe.</summary>
[Trait(Kind.Name, Kind.Analyzers)]
[Lesson(Pitfalls.FrontendCatalogClient)]
public sealed class CodeFixTests
{
    [Fact]
    public Task ResponseHeadersRead_is_added_to_a_disposed_response() => RuleHarness.FixAsync<CatalogClientAnalyzer, ResponseHeadersReadFix>("""
        using System.Collections.Generic;
        using System.Net.Http;
        using System.Net.Http.Json;
        using System.Threading;
        using System.Threading.Tasks;

        public record Product(int Id);

        public class Client(HttpClient http)
        {
            public async Task<List<Product>> Get(CancellationToken ct)
            {
                using var response = await {|HP0001:http.GetAsync("/products", ct)|};
                return await response.Content.ReadFromJsonAsync<List<Product>>(ct);
            }
        }
        """, """
        using System.Collections.Generic;
        using System.Net.Http;
        using System.Net.Http.Json;
        using System.Threading;
        using System.Threading.Tasks;

        public record Product(int Id);

        public class Client(HttpClient http)
        {
            public async Task<List<Product>> Get(CancellationToken ct)
            {
                using var response = await http.GetAsync("/products", HttpCompletionOption.ResponseHeadersRead, ct);
                return await response.Content.ReadFromJsonAsync<List<Product>>(ct);
            }
        }
        """);

    [Fact]
    public Task ResponseHeadersRead_is_not_offered_for_a_response_nobody_disposes()
    {
        // A response read at its headers holds its connection until disposed: here nothing disposes it, so no fix.
        const string Source = """
            using System.Collections.Generic;
            using System.Net.Http;
            using System.Net.Http.Json;
            using System.Threading.Tasks;

            public record Product(int Id);

            public class Client(HttpClient http)
            {
                public async Task<List<Product>> Get()
                {
                    var response = await {|HP0001:http.GetAsync("/products")|};
                    return await response.Content.ReadFromJsonAsync<List<Product>>();
                }
            }
            """;
        return RuleHarness.FixAsync<CatalogClientAnalyzer, ResponseHeadersReadFix>(Source, Source);
    }

    [Fact]
    public Task ReadAsStringAsync_and_Deserialize_become_ReadFromJsonAsync() => RuleHarness.FixAsync<CatalogClientAnalyzer, ReadFromJsonFix>("""
        using System.Collections.Generic;
        using System.Net.Http;
        using System.Text.Json;
        using System.Threading;
        using System.Threading.Tasks;

        public record Product(int Id);

        public class Client(HttpClient http)
        {
            public async Task<List<Product>> Local(HttpResponseMessage response, CancellationToken ct)
            {
                string json = await response.Content.ReadAsStringAsync(ct);
                return {|HP0001:JsonSerializer.Deserialize<List<Product>>(json)|};
            }

            public async Task<List<Product>> Nested(HttpResponseMessage response, JsonSerializerOptions options) =>
                {|HP0001:JsonSerializer.Deserialize<List<Product>>(await response.Content.ReadAsStringAsync(), options)|};
        }
        """, """
        using System.Collections.Generic;
        using System.Net.Http;
        using System.Text.Json;
        using System.Threading;
        using System.Threading.Tasks;
        using System.Net.Http.Json;

        public record Product(int Id);

        public class Client(HttpClient http)
        {
            public async Task<List<Product>> Local(HttpResponseMessage response, CancellationToken ct)
            {
                return await response.Content.ReadFromJsonAsync<List<Product>>(JsonSerializerOptions.Default, ct);
            }

            public async Task<List<Product>> Nested(HttpResponseMessage response, JsonSerializerOptions options) =>
                await response.Content.ReadFromJsonAsync<List<Product>>(options);
        }
        """);

    [Fact]
    public Task ReadFromJsonAsync_is_not_offered_when_the_string_is_used_again()
    {
        const string Source = """
            using System.Collections.Generic;
            using System.Net.Http;
            using System.Text.Json;
            using System.Threading.Tasks;

            public record Product(int Id);

            public class Client
            {
                public int Logged { get; private set; }

                public async Task<List<Product>> Read(HttpResponseMessage response)
                {
                    var json = await response.Content.ReadAsStringAsync();
                    Logged = json.Length;
                    return {|HP0001:JsonSerializer.Deserialize<List<Product>>(json)|};
                }
            }
            """;
        return RuleHarness.FixAsync<CatalogClientAnalyzer, ReadFromJsonFix>(Source, Source);
    }
}
