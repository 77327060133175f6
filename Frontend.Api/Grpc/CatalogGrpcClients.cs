using Grpc.Core;
using Grpc.Net.Client.Configuration;
using Grpc.Net.ClientFactory;
using HttpPerf.Catalog.Grpc;
using Microsoft.Extensions.Options;

namespace Frontend.Api.Grpc;

/// <summary>
/// The Catalog's gRPC clients, one per kind of call, as Aspire wires any client: <c>AddGrpcClient</c> over service
/// discovery's <c>http://_h2.catalog</c> (every replica's HTTP/2 listener, round robin per call), on the HttpClient
/// pipeline every client gets (ServiceDefaults), with two changes (docs/pitfalls/Frontend.Grpc.md):
/// <list type="bullet">
/// <item>The standard resilience handler is taken off. Its attempt and total timeouts (20 s and 120 s, as ServiceDefaults sets them) would cut a long
/// stream (dotnet/extensions#4814), and its retries would repeat gRPC's own. The call's deadline bounds it instead.</item>
/// <item>gRPC's own hedging: when a call has not answered its headers within the delay, a second attempt goes out,
/// which service discovery sends to the next replica; the first to answer wins, the other is cancelled.</item>
/// </list>
/// </summary>
internal static class CatalogGrpcClients
{
    public const string Unary = "catalog-grpc-unary";
    public const string Stream = "catalog-grpc-stream";
    public const string Batches = "catalog-grpc-batches";

    private static readonly Uri Catalog = new("http://_h2.catalog");

    public static void Add(IServiceCollection services)
    {
        Add<CatalogProducts.CatalogProductsClient>(services, Unary, unary: true);
        Add<CatalogProducts.CatalogProductsClient>(services, Stream, unary: false);
        Add<ProductBatchClient>(services, Batches, unary: false);
    }

    /// <summary>The call's one bound: its deadline, and the caller's token.</summary>
    public static CallOptions CallOptions(CatalogGrpcOptions options, CancellationToken cancellationToken) =>
        new(deadline: DateTime.UtcNow + options.Deadline, cancellationToken: cancellationToken);

    private static void Add<TClient>(IServiceCollection services, string name, bool unary)
        where TClient : class
    {
        var client = services.AddGrpcClient<TClient>(name, grpc => grpc.Address = Catalog)
            .ConfigureChannel((provider, channel) =>
            {
                var options = provider.GetRequiredService<IOptions<CatalogGrpcOptions>>().Value;
                if (unary)
                {
                    channel.MaxReceiveMessageSize = options.UnaryMaxReceiveMessageSize;
                }

                channel.ServiceConfig = new ServiceConfig
                {
                    MethodConfigs =
                    {
                        new MethodConfig
                        {
                            Names = { MethodName.Default },
                            HedgingPolicy = new HedgingPolicy
                            {
                                MaxAttempts = 2,
                                HedgingDelay = unary ? options.UnaryHedgingDelay : options.StreamHedgingDelay,
                                NonFatalStatusCodes = { StatusCode.Unavailable },
                            },
                        },
                    },
                };
            })
            .UseSocketsHttpHandler((handler, provider) =>
            {
                var window = provider.GetRequiredService<IOptions<CatalogGrpcOptions>>().Value.InitialStreamWindowSize;
                if (window > 0)
                {
                    handler.InitialHttp2StreamWindowSize = window;
                }
            });
        // Experimental since Microsoft.Extensions.Http.Resilience 8.x, and the one way to undo a default handler for one client.
#pragma warning disable EXTEXP0001
        client.RemoveAllResilienceHandlers();
#pragma warning restore EXTEXP0001
        services.AddKeyedTransient(name, (provider, _) => provider.GetRequiredService<GrpcClientFactory>().CreateClient<TClient>(name));
    }
}
