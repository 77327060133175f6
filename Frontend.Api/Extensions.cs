using System.Text.Json;
using Frontend.Api.CatalogClient;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.ServiceDefaults.Selection;
using Refit;

namespace Frontend.Api;

public static class FrontendServiceExtensions
{
    public static IHostApplicationBuilder AddFrontendServices(this IHostApplicationBuilder builder)
    {
        builder.Services.AddOptions<FrontendOptions>().BindConfiguration(FrontendOptions.Section).ValidateOnStart();

        var refit = new RefitSettings(new SystemTextJsonContentSerializer(new JsonSerializerOptions(FrontendJsonContext.Default.Options)))
        {
            // A failed Catalog call surfaces as HttpRequestException, which every service maps to a 502 problem.
            ExceptionFactory = response => ValueTask.FromResult<Exception?>(response.IsSuccessStatusCode
                ? null
                : new HttpRequestException($"Catalog answered {(int)response.StatusCode}.", null, response.StatusCode)),
        };

        // "http://catalog" is resolved by service discovery from services__catalog__http__0.
        builder.Services.AddRefitGeneratedClient<ICatalogApi>(refit)
            .ConfigureHttpClient(client => client.BaseAddress = new Uri("http://catalog"));

        builder.Services.AddPitfall<IProductListWriter>(IProductListWriter.Flag)
            .Variant<BufferedProductListWriter>(PerfMode.Naive)
            .Variant<StreamingProductListWriter>(PerfMode.Streaming)
            .Variant<FieldByFieldProductListWriter>(PerfMode.Optimized);
        return builder;
    }
}
