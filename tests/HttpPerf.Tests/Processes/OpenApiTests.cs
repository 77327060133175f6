using System.Text.Json;
using HttpPerf.Tests.Infrastructure;

namespace HttpPerf.Tests.Processes;

/// <summary>Each service describes its routes at <c>/openapi/v1.json</c>.</summary>
[Collection(Lanes.Processes)]
[Trait(Kind.Name, Kind.Processes)]
public sealed class OpenApiTests(SmallSystemFixture fixture) : SystemTests<SmallSystemFixture>(fixture)
{
    public static TheoryData<string, string[]> Documents => new()
    {
        { "Catalog.Api", ["/catalog/products", "/catalog/export", "/flags", "/runtime"] },
        { "Frontend.Api", ["/products", "/flags", "/runtime"] },
        { "Uploads.Api", ["/uploads", "/uploads/{id}", "/uploads/sink"] },
        { "Gateway", ["/admin/flags", "/admin/flags/{name}", "/live", "/flags"] },
    };

    [Theory]
    [MemberData(nameof(Documents))]
    public async Task Each_service_lists_its_routes_in_an_openapi_document(string service, string[] paths)
    {
        var process = Fixture.System.Services.Single(s => s.Name == service);
        using var client = new HttpClient { BaseAddress = process.BaseAddress };

        var document = await Http.GetAsync(client, "/openapi/v1.json");

        Assert.Equal(200, document.Status);
        using var json = JsonDocument.Parse(document.Body);
        Assert.StartsWith("3.", json.RootElement.GetProperty("openapi").GetString());
        var listed = json.RootElement.GetProperty("paths").EnumerateObject().Select(p => p.Name).ToList();
        Assert.All(paths, path => Assert.Contains(path, listed));
        // YARP's proxied routes are not the Gateway's own API.
        Assert.DoesNotContain(listed, path => path.StartsWith("/api/", StringComparison.Ordinal));
    }
}
