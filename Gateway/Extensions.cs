using Gateway.Admin;
using Gateway.Buffering;
using Gateway.Edge;
using Gateway.Live;
using Gateway.Relay;
using Gateway.Replicas;
using Gateway.Upstream;
using HttpPerf.ServiceDefaults.FlagSources;
using HttpPerf.ServiceDefaults.Hedging;
using HttpPerf.ServiceDefaults.Selection;
using Yarp.ReverseProxy.Forwarder;
using Yarp.ReverseProxy.Health;
using Yarp.ReverseProxy.Transforms;

namespace Gateway;

public static class GatewayServiceExtensions
{
    /// <summary>YARP's <c>TransportFailureRate</c> passive health policy, one for every cluster (appsettings.json).</summary>
    public const string PassiveHealthSection = "TransportFailureRate";

    public static IHostApplicationBuilder AddGatewayServices(this IHostApplicationBuilder builder)
    {
        // Routes and clusters live in appsettings.json ("ReverseProxy"). A cluster address such as http://catalog
        // becomes one destination per endpoint service discovery lists (services__catalog__http__0, __1, ...), named
        // "catalog[http://127.0.0.1:5001/]", each balanced and health-checked on its own; it re-resolves when they change.
        builder.Services.AddReverseProxy()
            .LoadFromConfig(builder.Configuration.GetSection("ReverseProxy"))
            .AddServiceDiscoveryDestinationResolver()
            .AddConfigFilter<ProbeInterval>()
            // The admin key is the Gateway's alone: never forwarded to a service.
            .AddTransforms(transforms =>
            {
                transforms.AddRequestHeaderRemove(AdminKey.Header);
                // A GET or HEAD that may be hedged takes its candidates to the forwarding client's handlers.
                transforms.AddRequestTransform(HedgedCall.Attach);
                // Relay chunked bodies in the largest pieces that have arrived, not HttpClient's 4 KB (CoalescingContent).
                // The catalog that DestinationRouting reads on from another destination coalesces in its own buffer:
                // wrapped again, each of its bytes would be copied twice on its way to the client.
                transforms.AddResponseTransform(context =>
                {
                    if (context.ProxyResponse?.Content is { } content && content.Headers.ContentLength is null
                        && content is not ResumingCatalogContent<HedgingOptions> { Coalesces: true })
                    {
                        context.ProxyResponse.Content = CoalescingContent.Wrap(content);
                    }

                    return default;
                });
            });
        // YARP keeps a replica its passive check took out for the longer of the cluster's ReactivationPeriod and the
        // failure-rate policy's detection window (60 s unless set), so the clusters' 10 s meant 60: a replica back
        // from a fault stayed out of the rotation for up to a minute. The window is set to the reactivation period.
        builder.Services.AddOptions<TransportFailureRateHealthPolicyOptions>().BindConfiguration(PassiveHealthSection);
        builder.Services.AddInlineRelay();
        // Not the package's AddServiceDiscoveryForwarderFactory: that resolves the name again per request, below YARP,
        // and would hide the replicas from its balancing, health checks and hedging.
        builder.Services.AddSingleton<IForwarderHttpClientFactory, HedgingRotatingConnectionsHttpClientFactory>();
        builder.Services.AddOptions<HedgingOptions>().BindConfiguration(HedgingOptions.Section).ValidateHedging(HedgingOptions.Section);
        builder.Services.AddSingleton<HedgeDelay<HedgingOptions>>().AddSingleton<HedgeBudget<HedgingOptions>>().AddSingleton<BodySilence<HedgingOptions>>();

        builder.Services.AddPitfall<IExchangeLogger, BufferingExchangeLogger, StreamingExchangeLogger>(IExchangeLogger.Flag);
        builder.Services.AddPitfall<IUpstreamProtocol, Http11Upstream, Http2ForRequestBodies>(IUpstreamProtocol.Flag);
        builder.Services.AddOptions<UpstreamOptions>().BindConfiguration(UpstreamOptions.Section);

        builder.Services.AddSingleton<RecentExchanges>();
        builder.Services.AddOptions<AdminOptions>().BindConfiguration(AdminOptions.Section);
        builder.Services.AddSingleton<AdminKey>();

        // The edge: who may force a mode, and how many proxied requests run and wait at once.
        builder.Services.AddSingleton<IPerfModeGate, EdgeModeGate>();
        builder.Services.AddOptions<GatewayOptions>().BindConfiguration(GatewayOptions.Section)
            .Validate(o => o.MaxConcurrentRequests > 0 && o.MaxQueuedRequests >= 0, "Gateway:MaxConcurrentRequests must be positive and Gateway:MaxQueuedRequests not negative: no request could be proxied.")
            .Validate(o => o.ProbeInterval is null || o.ProbeInterval > TimeSpan.Zero, "Gateway:ProbeInterval must be positive.")
            .ValidateOnStart();
        builder.Services.AddSingleton<ProxyConcurrency>();
        // The admin API needs somewhere to write flags: the flags file or Redis (AddPerfFlags registers the store).
        if (builder.Services.Any(service => service.ServiceType == typeof(IFlagStore)))
        {
            builder.Services.AddSingleton<FlagsAdmin>();
            builder.Services.AddSingleton<FlagAudit>();
            builder.Services.AddHostedService(services => services.GetRequiredService<FlagAudit>());
            builder.Services.AddHttpClient(nameof(FlagsAdmin));
        }
        return builder;
    }

    /// <summary>
    /// YARP's pipeline: the concurrency limit (<see cref="ProxyConcurrency"/>), the landing page's recorder, then the
    /// exchange logger (the Gateway.Buffering pitfall) around every proxied request, then the protocol to the service
    /// (Gateway.Upstream: the route's cluster, over HTTP/1.1, or its HTTP/2 twin), then the record of a GET or HEAD's
    /// other destinations, which the forwarding client hedges to (<see cref="HedgedCall"/>), and YARP's own balancing
    /// and passive health checks (policies in appsettings.json, per cluster).
    /// </summary>
    public static void UseProxyPipeline(this IReverseProxyApplicationBuilder proxy)
    {
        proxy.Use(proxy.ApplicationServices.GetRequiredService<ProxyConcurrency>().AdmitAsync);
        var recent = proxy.ApplicationServices.GetRequiredService<RecentExchanges>();
        proxy.Use(recent.RecordAsync);
        proxy.Use((context, next) => context.RequestServices.GetRequiredService<IExchangeLogger>().InvokeAsync(context, next));
        proxy.Use(RethrowOutOfMemoryAsync);
        proxy.Use((context, next) => context.RequestServices.GetRequiredService<IUpstreamProtocol>().InvokeAsync(context, next));
        proxy.Use(HedgedCall.RecordAsync);
        proxy.UseSessionAffinity();
        proxy.UseLoadBalancing();
        proxy.UsePassiveHealthChecks();
    }

    /// <summary>
    /// YARP reports a relay that ran out of memory (the naive Gateway.Buffering holds whole bodies) as a 502, the
    /// service's fault. It is this Gateway's own, for lack of memory: thrown on, so it is answered as every service
    /// answers it, 503 with Retry-After and one log line (ServiceDefaults' OutOfMemoryHandler, docs/memory.md).
    /// </summary>
    private static async Task RethrowOutOfMemoryAsync(HttpContext context, Func<Task> next)
    {
        await next();
        for (var error = context.Features.Get<IForwarderErrorFeature>()?.Exception; error is not null; error = error.InnerException)
        {
            if (error is OutOfMemoryException && !context.Response.HasStarted)
            {
                System.Runtime.ExceptionServices.ExceptionDispatchInfo.Throw(error);
            }
        }
    }
}
