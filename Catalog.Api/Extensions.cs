using Catalog.Api.Data;
using Catalog.Api.Export;
using Catalog.Api.Serialization;
using HttpPerf.ServiceDefaults.Flags;

namespace Microsoft.Extensions.Hosting;

public static class CatalogServiceExtensions
{
    public static IHostApplicationBuilder AddCatalogServices(this IHostApplicationBuilder builder)
    {
        builder.Services.Configure<CatalogOptions>(builder.Configuration.GetSection(CatalogOptions.Section));
        builder.Services.AddSingleton<CatalogStore>();
        builder.Services.AddHostedService<CatalogSeeder>();
        builder.Services.AddSingleton<CatalogBaseline>();

        // The naive writer runs MVC's output formatters, exactly as a controller returning Ok(list) would.
        builder.Services.AddMvcCore().AddNewtonsoftJson();
        builder.Services.AddPitfall<ICatalogWriter>(ICatalogWriter.Flag)
            .Variant<NaiveCatalogWriter>(PerfMode.Naive)
            .Variant<StreamingCatalogWriter>(PerfMode.Streaming)
            .Variant<FieldByFieldCatalogWriter>(PerfMode.Optimized);
        builder.Services.AddPitfall<ICatalogExportWriter, FlushPerRowExportWriter, CoalescedExportWriter>(ICatalogExportWriter.Flag);
        return builder;
    }
}
