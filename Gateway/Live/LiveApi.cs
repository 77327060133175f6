using Gateway.Admin;
using Gateway.Live;
using HttpPerf.ServiceDefaults.Flags;
using Microsoft.AspNetCore.Http.HttpResults;

namespace Microsoft.AspNetCore.Builder;

/// <summary>What the landing page at <c>/</c> shows, refreshed every few seconds: the flags, and the last minute by route and variant.</summary>
public sealed record LiveView(double WindowSeconds, IReadOnlyList<LiveFlag> Flags, IReadOnlyList<RouteWindow> Routes);

/// <summary>A flag as the landing page shows it: the variant in the flags file, and what each of its rungs does.</summary>
public sealed record LiveFlag(string Flag, string Service, string Variant, string Naive, string Optimized)
{
    /// <summary>What the rung in the flags file does (the page's "What it does now").</summary>
    public string? Does => Pitfalls.Find(Flag)?.Describe(Variant);

    /// <summary>Every rung of the flag, worst to best.</summary>
    public IReadOnlyList<PitfallVariant> Variants => Pitfalls.Find(Flag)?.Variants ?? [];
}

public static class LiveApi
{
    public static IEndpointRouteBuilder MapLiveApi(this IEndpointRouteBuilder app)
    {
        app.MapGet("/live", GetLive)
            .WithTags("Live")
            .WithSummary("Every flag with its variant in the flags file, and the last minute of proxied requests per route and variant: count, p50, p99, MB/s.");
        return app;
    }

    public static async Task<Ok<LiveView>> GetLive(RecentExchanges exchanges, IServiceProvider services, CancellationToken cancellationToken)
    {
        var file = await ReadFlagsAsync(services.GetService<IFlagStore>(), cancellationToken);
        var flags = Pitfalls.All.Select(p => new LiveFlag(p.Flag, p.Service, file[p.Flag], p.Naive, p.Optimized)).ToList();
        return TypedResults.Ok(new LiveView(RecentExchanges.Window.TotalSeconds, flags, exchanges.Summarize()));
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
