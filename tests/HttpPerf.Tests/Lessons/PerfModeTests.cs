using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.ServiceDefaults.FlagSources;
using HttpPerf.ServiceDefaults.Selection;
using Microsoft.Extensions.DependencyInjection;
using HttpPerf.Tests.Infrastructure;

namespace HttpPerf.Tests.Lessons;

/// <summary>The variant names, a request's mode from its <c>X-Perf-Variants</c>, and the rungs a pitfall registers.</summary>
[Trait(Kind.Name, Kind.Lessons)]
public sealed class PerfModeTests
{
    [Theory]
    [InlineData("", "none")]
    [InlineData("Gateway.Buffering=naive, Gateway.Upstream=naive, Frontend.CatalogClient=naive, Frontend.Replicas=naive, Catalog.Serialization=naive", "naive")]
    [InlineData("Gateway.Buffering=optimized, Gateway.Upstream=optimized, Catalog.Serialization=optimized", "optimized")]
    [InlineData("Gateway.Buffering=optimized, Gateway.Upstream=optimized, Catalog.Serialization=naive", "mixed")]
    // X-Perf-Mode: streaming: the Gateway's pitfall has no such rung and serves optimized in its place.
    [InlineData("Gateway.Buffering=optimized, Gateway.Upstream=optimized, Frontend.CatalogClient=streaming, Catalog.Serialization=streaming", "streaming")]
    // Frontend streaming, Catalog optimized: the Catalog has a streaming rung and did not serve it.
    [InlineData("Gateway.Buffering=optimized, Gateway.Upstream=optimized, Frontend.CatalogClient=streaming, Catalog.Serialization=optimized", "mixed")]
    [InlineData("Gateway.Buffering=naive, Gateway.Upstream=naive, Frontend.CatalogClient=streaming, Catalog.Serialization=streaming", "mixed")]
    public void A_request_reads_as_one_mode_only_when_every_hop_served_it_or_its_best_in_its_place(string header, string mode) =>
        Assert.Equal(mode, PerfMode.Summarize(header));

    [Fact]
    public void Every_pitfall_runs_from_naive_to_optimized_and_only_the_four_ladders_have_a_middle_rung()
    {
        Assert.All(Pitfalls.All, p => Assert.Equal(PerfMode.Naive, p.Variants[0].Name));
        Assert.All(Pitfalls.All, p => Assert.Equal(PerfMode.Optimized, p.Variants[^1].Name));
        Assert.Equal(
            [Pitfalls.FrontendCatalogClient, Pitfalls.FrontendGrpc, Pitfalls.CatalogSerialization, Pitfalls.UploadsReader],
            Pitfalls.All.Where(p => p.Has(PerfMode.Streaming)).Select(p => p.Flag));
        Assert.Equal("'naive', 'streaming' or 'optimized'", PerfMode.Choices(PerfMode.All));
    }

    [Fact]
    public void A_stored_rung_the_flag_does_not_have_reads_as_optimized_so_writing_the_flags_back_never_fails()
    {
        var stored = FlagsFile.Parse(FlagsFile.ToJson(Pitfalls.All.ToDictionary(p => p.Flag, p => p.Serving(PerfMode.Streaming)))
            .Replace("\"default_when_enabled\": \"optimized\"", "\"default_when_enabled\": \"streaming\"", StringComparison.Ordinal));

        Assert.All(Pitfalls.All, p => Assert.Equal(p.Serving(PerfMode.Streaming), stored[p.Flag]));
        Assert.Contains("\"streaming\"", FlagsFile.ToJson(stored), StringComparison.Ordinal);
    }

    [Fact]
    public void A_service_registers_each_rung_once_and_a_missing_rung_is_served_by_optimized()
    {
        var services = new ServiceCollection();
        services.AddPitfall<IComparable>(Pitfalls.UploadsReader)
            .Variant<string>(PerfMode.Naive)
            .Variant<Version>(PerfMode.Optimized);
        var flags = (PitfallFlags)services.Single(d => d.ServiceType == typeof(PitfallFlags)).ImplementationInstance!;

        Assert.Equal([PerfMode.Naive, PerfMode.Optimized], flags.VariantsOf(Pitfalls.UploadsReader));
        Assert.Equal(PerfMode.Optimized, flags.Serving(Pitfalls.UploadsReader, PerfMode.Streaming));
        Assert.Equal(PerfMode.Naive, flags.Serving(Pitfalls.UploadsReader, PerfMode.Naive));
        Assert.Throws<ArgumentException>(() => services.AddPitfall<IComparable>(Pitfalls.CatalogSerialization).Variant<string>("turbo"));
    }
}
