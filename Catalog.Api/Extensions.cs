using Catalog.Api.Data;
using Catalog.Api.Grpc;
using Catalog.Api.Serialization;
using Catalog.Api.WriteStrategy;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.ServiceDefaults.Selection;

namespace Catalog.Api;

public static class CatalogServiceExtensions
{
    public static IHostApplicationBuilder AddCatalogServices(this IHostApplicationBuilder builder)
    {
        builder.Services.AddOptions<CatalogOptions>().BindConfiguration(CatalogOptions.Section)
            .Validate(o => o.ProductCount > 0, "Catalog:ProductCount must be positive: the lessons need products to serve.")
            .Validate(o => !string.IsNullOrWhiteSpace(o.DataDirectory), "Catalog:DataDirectory must name a directory for the SQLite file.")
            .ValidateOnStart();
        builder.Services.AddSingleton<CatalogStore>();
        builder.Services.AddHostedService<CatalogSeeder>();
        builder.Services.AddSingleton<CatalogBaseline>();

        NaiveCatalogWriter.AddFormatters(builder.Services);
        builder.Services.AddPitfall<ICatalogWriter>(ICatalogWriter.Flag)
            .Variant<NaiveCatalogWriter>(PerfMode.Naive)
            .Variant<StreamingCatalogWriter>(PerfMode.Streaming)
            .Variant<FieldByFieldCatalogWriter>(PerfMode.Optimized);
        builder.Services.AddPitfall<ICatalogExportWriter, FlushPerRowExportWriter, CoalescedExportWriter>(ICatalogExportWriter.Flag);

        // The catalog over gRPC for Frontend.Grpc, with the service's health checks as grpc.health.v1 (docs/pitfalls/Frontend.Grpc.md).
        CatalogGrpcService.AddTo(builder.Services);
        builder.Services.AddGrpcHealthChecks();
        return builder;
    }
}
