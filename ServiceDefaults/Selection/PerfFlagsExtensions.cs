using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.ServiceDefaults.FlagSources;
using Microsoft.AspNetCore.Builder;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection.Extensions;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.FeatureManagement;

namespace HttpPerf.ServiceDefaults.Selection;

public static class PerfFlagsExtensions
{
    /// <summary>
    /// Flags (Microsoft.FeatureManagement schema, variants <c>naive</c>, <c>streaming</c> where a pitfall has it, and
    /// <c>optimized</c>) come from Redis when
    /// <c>ConnectionStrings:flags</c> is set (every replica of every service shares them), else from one JSON file
    /// watched for changes; either way a change reaches a running service without a restart. With neither, every
    /// flag is <c>optimized</c>.
    /// </summary>
    public static IHostApplicationBuilder AddPerfFlags(this IHostApplicationBuilder builder)
    {
        if (builder.Configuration.GetConnectionString(SystemContract.FlagsConnectionName) is { Length: > 0 })
        {
            builder.AddSharedRedis();
            var source = new RedisFlagsSource();
            builder.Configuration.Add(source);
            builder.Services.AddSingleton(source);
            builder.Services.AddHostedService<RedisFlagsStartup>();
            builder.Services.AddSingleton<IFlagStore, RedisFlagStore>();
        }
        // Read here, not bound as options: a configuration source is added while configuration is built, before DI.
        else if (builder.Configuration[SystemContract.ConfigurationKey(SystemContract.FlagsFile)] is { Length: > 0 } file)
        {
            var path = Path.GetFullPath(file);
            Directory.CreateDirectory(Path.GetDirectoryName(path)!);
            var source = new FlagsFileSource { Path = path, Optional = true, ReloadOnChange = true };
            source.ResolveFileProvider();
            builder.Configuration.Add(source);
            builder.Services.AddSingleton(source.Warnings);
            builder.Services.AddSingleton<IFlagStore>(new FileFlagStore(path));
        }

        builder.Services.AddHealthChecks().AddCheck<FlagsHealthCheck>("flags");

        builder.Services.AddFeatureManagement().WithTargeting();
        builder.Services.AddHttpContextAccessor();
        GetFlags(builder.Services);
        builder.Services.TryAddScoped<RequestVariants>();
        builder.Services.TryAddSingleton<IPerfModeGate, TrustCaller>();
        builder.Services.TryAddTransient<DownstreamVariantsHandler>();
        return builder;
    }

    /// <summary>
    /// Registers a two-rung pitfall: <typeparamref name="TService"/> resolves, per request, to the naive or the
    /// optimized implementation, whichever <paramref name="flag"/> selects for that request.
    /// </summary>
    public static IServiceCollection AddPitfall<TService, TNaive, TOptimized>(this IServiceCollection services, string flag)
        where TService : class
        where TNaive : class, TService
        where TOptimized : class, TService
    {
        services.AddPitfall<TService>(flag)
            .Variant<TNaive>(PerfMode.Naive)
            .Variant<TOptimized>(PerfMode.Optimized);
        return services;
    }

    /// <summary>
    /// Registers a pitfall with any rungs: <typeparamref name="TService"/> resolves, per request, to the
    /// implementation registered under the variant <paramref name="flag"/> selects for that request (or under
    /// <c>optimized</c>, when it selects a rung this pitfall does not have). Add one <c>Variant&lt;T&gt;(name)</c> per rung.
    /// Not Microsoft.FeatureManagement's variant services (<c>WithVariantService&lt;T&gt;(flag)</c>), though the flags are
    /// its own and it evaluates them (<see cref="PerfVariantsMiddleware"/>): its provider is handed every rung at once
    /// (<c>IEnumerable&lt;T&gt;</c>, each constructed on every resolve), a handler must await
    /// <c>IVariantServiceProvider&lt;T&gt;.GetServiceAsync</c> instead of taking the interface, and it picks the variant from
    /// the flag's allocation alone, so a request that forces a mode (<c>X-Perf-Mode</c>, <c>perf-mode</c> baggage) and the
    /// record of the rung that served it (span event, metric tags, <c>X-Perf-Variants</c>) would need a second path.
    /// Keyed DI gives the handler the one rung this request resolved to, and records it as it does.
    /// </summary>
    public static PitfallBuilder<TService> AddPitfall<TService>(this IServiceCollection services, string flag)
        where TService : class
    {
        var flags = GetFlags(services);
        flags.Add(flag);
        services.AddScoped(sp => sp.GetRequiredKeyedService<TService>(sp.GetRequiredService<RequestVariants>().Serve(flag)));
        return new PitfallBuilder<TService>(services, flag, flags);
    }

    public static IApplicationBuilder UsePerfVariants(this IApplicationBuilder app)
    {
        app.ApplicationServices.GetRequiredService<PitfallFlags>().EnsureMatchesCatalogue();
        app.ApplicationServices.GetService<FlagsFileWarnings>()?.Attach(
            app.ApplicationServices.GetRequiredService<ILoggerFactory>().CreateLogger<FlagsFileWarnings>());
        return app.UseMiddleware<PerfVariantsMiddleware>();
    }

    public static IHttpClientBuilder AddDownstreamVariants(this IHttpClientBuilder http) =>
        http.AddHttpMessageHandler<DownstreamVariantsHandler>();

    private static PitfallFlags GetFlags(IServiceCollection services)
    {
        var existing = services.FirstOrDefault(d => d.ServiceType == typeof(PitfallFlags))?.ImplementationInstance;
        if (existing is PitfallFlags flags)
        {
            return flags;
        }

        flags = new PitfallFlags();
        services.AddSingleton(flags);
        return flags;
    }
}
