using System.Net.Http;
using HttpPerf.ServiceDefaults.Hedging;
using HttpPerf.ServiceDefaults.Http;
using Microsoft.Extensions.Http.Resilience;
using Microsoft.Extensions.Options;
using Polly;
using Yarp.ReverseProxy.Forwarder;

namespace Gateway.Replicas;

/// <summary>
/// YARP's forwarding client, one per cluster, with two changes:
/// <list type="bullet">
/// <item>Pooled connections are retired after <see cref="HttpClientOptions.PooledConnectionLifetime"/> (10 s by
/// default). Where one address stands for many replicas (a Compose service name, a Kubernetes Service), a connection
/// reaches one replica for as long as it lives; YARP's default keeps it forever, so the replicas that started last
/// would never see a request. A connection that cannot be opened fails after <see cref="HttpClientOptions.ConnectTimeout"/>
/// (2 s), so the hedge below takes the next destination.</item>
/// <item>A GET or HEAD with another destination to go to (<see cref="HedgedCall"/>) goes there too when it fails before
/// its headers, and on the routes marked for it when it is slow, as Frontend.Api hedges its Catalog calls: Polly's
/// hedging (<see cref="HedgingStrategy"/>) over <see cref="DestinationRouting"/>. Every other request passes through as
/// YARP sent it.</item>
/// </list>
/// Its page: docs/pitfalls/Frontend.Replicas.md.
/// </summary>
internal sealed class HedgingRotatingConnectionsHttpClientFactory(IOptions<HttpClientOptions> options, IServiceProvider services) : ForwarderHttpClientFactory
{
    protected override void ConfigureHandler(ForwarderHttpClientContext context, SocketsHttpHandler handler)
    {
        base.ConfigureHandler(context, handler);
        options.Value.Configure(handler);
    }

    protected override HttpMessageHandler WrapHandler(ForwarderHttpClientContext context, HttpMessageHandler handler)
    {
        var delay = services.GetRequiredService<HedgeDelay<HedgingOptions>>();
        var budget = services.GetRequiredService<HedgeBudget<HedgingOptions>>();
        var hedging = new ResiliencePipelineBuilder<HttpResponseMessage>()
            .AddHedging(HedgingStrategy.For(delay, budget,
                slow: static request => HedgedCall.Of(request) is { HasUntried: true, WhenSlow: true } call ? call.Route : null,
                again: static request => HedgedCall.Of(request) is { HasUntried: true }))
            .Build();
        var routing = ActivatorUtilities.CreateInstance<DestinationRouting>(services);
        routing.InnerHandler = base.WrapHandler(context, handler);
        return new ResilienceHandler(request => HedgedCall.Of(request) is null ? ResiliencePipeline<HttpResponseMessage>.Empty : hedging)
        {
            InnerHandler = routing,
        };
    }
}
