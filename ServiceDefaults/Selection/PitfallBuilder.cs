using Microsoft.Extensions.DependencyInjection;

namespace HttpPerf.ServiceDefaults.Selection;

/// <summary>One pitfall's rungs, each an implementation of <typeparamref name="TService"/> keyed by its variant name.</summary>
public sealed class PitfallBuilder<TService>(IServiceCollection services, string flag, PitfallFlags flags)
    where TService : class
{
    public IServiceCollection Services => services;

    public PitfallBuilder<TService> Variant<TImplementation>(string variant)
        where TImplementation : class, TService
    {
        flags.AddVariant(flag, variant);
        services.AddKeyedScoped<TService, TImplementation>(variant);
        return this;
    }
}
