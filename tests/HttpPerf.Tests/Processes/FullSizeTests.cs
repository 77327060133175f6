using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.Tests.Infrastructure;

namespace HttpPerf.Tests.Processes;

/// <summary>At the default catalog size (about 25 MB): both modes deliver the same products, as JSON and over gRPC.</summary>
[Collection(Lanes.Processes)]
[Trait(Kind.Name, Kind.Processes)]
[Lesson(Pitfalls.CatalogSerialization)]
[Lesson(Pitfalls.FrontendCatalogClient)]
[Lesson(Pitfalls.FrontendGrpc)]
public sealed class FullSizeTests(FullSizeSystemFixture fixture) : SystemTests<FullSizeSystemFixture>(fixture)
{
    [Fact]
    public async Task Both_modes_deliver_the_full_catalog_item_by_item()
    {
        var gateway = Fixture.Gateway;

        var (naiveCatalog, optimizedCatalog) = await Http.GetInBothModesAsync(gateway, "/api/catalog/products");
        Assert.InRange(optimizedCatalog.Body.Length, 24_000_000, 27_000_000);
        Assert.Equal(naiveCatalog.Sha256, optimizedCatalog.Sha256);

        var (naive, optimized) = await Http.GetInBothModesAsync(gateway, "/api/products");
        Assert.Equal("Gateway.Buffering=naive, Gateway.Upstream=naive, Frontend.CatalogClient=naive, Frontend.Replicas=naive, Catalog.Serialization=naive", naive.Variants);
        Assert.Equal("Gateway.Buffering=optimized, Gateway.Upstream=optimized, Frontend.CatalogClient=optimized, Frontend.Replicas=optimized, Catalog.Serialization=optimized", optimized.Variants);

        var products = optimizedCatalog.Json<List<CatalogProduct>>();
        var naiveItems = naive.Json<List<ProductView>>();
        var optimizedItems = optimized.Json<List<ProductView>>();
        Assert.Equal(products.Count, naiveItems.Count);
        Assert.Equal(products.Count, optimizedItems.Count);
        for (var i = 0; i < products.Count; i++)
        {
            Assert.Equal(products[i].Id, naiveItems[i].Id);
            Assert.Equal(naiveItems[i], optimizedItems[i]);
        }

        // Over gRPC, the same bytes: the unary call's one message (about 19 MB) fits the naive rung's raised limit, and
        // the stream's messages the default one.
        var (naiveGrpc, optimizedGrpc) = await Http.GetInBothModesAsync(gateway, "/api/products/grpc");
        Assert.Equal(optimized.Sha256, naiveGrpc.Sha256);
        Assert.Equal(optimized.Sha256, optimizedGrpc.Sha256);
    }
}
