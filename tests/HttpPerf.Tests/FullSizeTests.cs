using HttpPerf.Tests.Infrastructure;
using LoadGen.LocalSystem;

namespace HttpPerf.Tests;

/// <summary>Once, at the default catalog size (about 25 MB): both modes deliver the same products.</summary>
public sealed class FullSizeTests
{
    [Fact]
    public async Task Both_modes_deliver_the_full_catalog_item_by_item()
    {
        await using var system = await LocalSystem.StartAsync(new LocalSystemOptions(), TestContext.Current.CancellationToken);
        using var gateway = new HttpClient { BaseAddress = system.Gateway.BaseAddress };

        var (naiveCatalog, optimizedCatalog) = await Http.GetInBothModesAsync(gateway, "/api/catalog/products");
        Assert.InRange(optimizedCatalog.Body.Length, 24_000_000, 27_000_000);
        Assert.Equal(naiveCatalog.Sha256, optimizedCatalog.Sha256);

        var (naive, optimized) = await Http.GetInBothModesAsync(gateway, "/api/products");
        Assert.Equal("Gateway.Buffering=naive, Frontend.CatalogClient=naive, Catalog.Serialization=naive", naive.Variants);
        Assert.Equal("Gateway.Buffering=optimized, Frontend.CatalogClient=optimized, Catalog.Serialization=optimized", optimized.Variants);

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
    }
}
