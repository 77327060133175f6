using Gateway.Admin;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.ServiceDefaults.FlagSources;
using Microsoft.AspNetCore.Http.HttpResults;
using Yarp.ReverseProxy;

namespace Gateway.Live;

public static class LiveApi
{
    public static IEndpointRouteBuilder MapLiveApi(this IEndpointRouteBuilder app)
    {
        app.MapGet("/live", GetLive)
            .WithTags("Live")
            .WithSummary("Every flag with its variant in the flags file, the last minute of proxied requests per route and variant (count, p50, p99, MB/s), and each replica's health as the Gateway sees it.");
        return app;
    }

    public static async Task<Ok<LiveView>> GetLive(RecentExchanges exchanges, IProxyStateLookup proxy, IServiceProvider services, CancellationToken cancellationToken)
    {
        var file = await ReadFlagsAsync(services.GetService<IFlagStore>(), cancellationToken);
        var flags = Pitfalls.All.Select(p => new LiveFlag(p.Flag, p.Service, file[p.Flag], p.Naive, p.Optimized)).ToList();
        return TypedResults.Ok(new LiveView(RecentExchanges.Window.TotalSeconds, flags, exchanges.Summarize(), LiveDestination.From(proxy)));
    }

    /// <summary>The flags store's variants; "unknown" for each while it cannot be read (the page keeps drawing).</summary>
    private static async Task<IReadOnlyDictionary<string, string>> ReadFlagsAsync(IFlagStore? store, CancellationToken cancellationToken)
    {
        try
        {
            return store is null ? FlagsFile.Defaults() : await store.ReadAsync(cancellationToken);
        }
        catch (FlagStoreUnavailableException)
        {
            return Pitfalls.All.ToDictionary(p => p.Flag, _ => "unknown");
        }
    }
}
