using System.Text.Json;
using Frontend.Api.Blocking;
using Frontend.Api.CatalogClient;
using Frontend.Api.Grpc;
using Frontend.Api.Replicas;
using Microsoft.Extensions.DependencyInjection.Extensions;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.ServiceDefaults.Hedging;
using HttpPerf.ServiceDefaults.Selection;
using Refit;

namespace Frontend.Api;

public static class FrontendServiceExtensions
{
    public static IHostApplicationBuilder AddFrontendServices(this IHostApplicationBuilder builder)
    {
        builder.Services.AddOptions<FrontendOptions>().BindConfiguration(FrontendOptions.Section).ValidateOnStart();
        builder.Services.AddOptions<ReplicaOptions>().BindConfiguration(ReplicaOptions.Section).ValidateHedging(ReplicaOptions.Section)
            .Validate(o => o.EjectionTime > TimeSpan.Zero && o.ProbeInterval > TimeSpan.Zero && o.LatencyDecay > TimeSpan.Zero, "Frontend:Replicas:EjectionTime, ProbeInterval and LatencyDecay must be positive.")
            .Validate(o => o.AttemptTimeout > TimeSpan.Zero && o.AttemptTimeout <= o.TotalTimeout, "Frontend:Replicas:AttemptTimeout must be positive and at most Frontend:Replicas:TotalTimeout.");

        var refit = new RefitSettings(new SystemTextJsonContentSerializer(new JsonSerializerOptions(FrontendJsonContext.Default.Options)))
        {
            // A failed Catalog call surfaces as HttpRequestException, which every service maps to a 502 problem, or to a 503
            // with Retry-After where the Catalog refused for now (its own 503: ServiceDefaults' DependencyUnavailableHandler).
            ExceptionFactory = response => ValueTask.FromResult<Exception?>(response.IsSuccessStatusCode
                ? null
                : new HttpRequestException($"Catalog answered {(int)response.StatusCode}.", null, response.StatusCode)),
        };

        // "http://catalog" names the Catalog's replicas, which service discovery lists from services__catalog__http__0, __1, ...
        // One Refit client per rung of Frontend.Replicas, each on its own pipeline; a request takes the one its flag says.
        builder.Services.AddPitfall<ICatalogReplicas>(ICatalogReplicas.Flag)
            .Variant<RetryAfterTimeout>(PerfMode.Naive)
            .Variant<HedgedReplicas>(PerfMode.Optimized);
        RetryAfterTimeout.Configure(CatalogClient(builder.Services, PerfMode.Naive, refit));
        HedgedReplicas.Configure(CatalogClient(builder.Services, PerfMode.Optimized, refit));
        builder.Services.AddSingleton<ReplicaSet>().AddSingleton<HedgeDelay<ReplicaOptions>>().AddSingleton<HedgeBudget<ReplicaOptions>>().AddSingleton<BodySilence<ReplicaOptions>>();
        builder.Services.TryAddSingleton(TimeProvider.System);
        builder.Services.AddScoped<ICatalogApi>(services => services.GetRequiredService<ICatalogReplicas>());

        builder.Services.AddPitfall<IProductListWriter>(IProductListWriter.Flag)
            .Variant<BufferedProductListWriter>(PerfMode.Naive)
            .Variant<StreamingProductListWriter>(PerfMode.Streaming)
            .Variant<FieldByFieldProductListWriter>(PerfMode.Optimized);

        // The same list over gRPC (GET /products/grpc): its clients, its problems, its rungs (docs/pitfalls/Frontend.Grpc.md).
        builder.Services.AddOptions<CatalogGrpcOptions>().BindConfiguration(CatalogGrpcOptions.Section)
            .Validate(o => o.BatchSize is > 0 and <= CatalogGrpcOptions.MaxBatchSize, $"Frontend:Grpc:BatchSize must be 1 to {CatalogGrpcOptions.MaxBatchSize}.")
            .Validate(o => o.Deadline > TimeSpan.Zero && o.StreamHedgingDelay > TimeSpan.Zero && o.UnaryHedgingDelay > TimeSpan.Zero, "Frontend:Grpc:Deadline and the hedging delays must be positive.")
            .Validate(o => o.UnaryMaxReceiveMessageSize > 0, "Frontend:Grpc:UnaryMaxReceiveMessageSize must be positive.")
            .ValidateOnStart();
        CatalogGrpcClients.Add(builder.Services);
        builder.Services.AddExceptionHandler<GrpcProblems>();
        builder.Services.AddPitfall<IGrpcProductListWriter>(IGrpcProductListWriter.Flag)
            .Variant<UnaryGrpcProductListWriter>(PerfMode.Naive)
            .Variant<StreamedGrpcProductListWriter>(PerfMode.Streaming)
            .Variant<FieldByFieldGrpcProductListWriter>(PerfMode.Optimized);

        // One product's page (GET /products/{id}): a thread blocked on the Catalog call, or none (docs/pitfalls/Frontend.Blocking.md).
        ProductPage.AddClient(builder.Services);
        builder.Services.AddPitfall<IProductPageWriter>(IProductPageWriter.Flag)
            .Variant<BlockingProductPageWriter>(PerfMode.Naive)
            .Variant<AsyncProductPageWriter>(PerfMode.Optimized);
        return builder;
    }

    // A generated Refit client keyed by the rung's name, over the named HttpClient that carries the rung's pipeline.
    private static IHttpClientBuilder CatalogClient(IServiceCollection services, string variant, RefitSettings refit)
    {
        var name = $"catalog-{variant}";
        services.AddKeyedTransient(variant, (provider, _) =>
            RestService.ForGenerated<ICatalogApi>(provider.GetRequiredService<IHttpClientFactory>().CreateClient(name), refit));
        return services.AddHttpClient(name, client => client.BaseAddress = new Uri("http://catalog"));
    }
}
