namespace HttpPerf.Tests.Infrastructure;

/// <summary>
/// The suite runs in two lanes side by side (xunit.runner.json: collections in parallel, at most two tests at a time),
/// each one collection whose classes run one after another, so that nothing of one lane meets its own kind:
/// <list type="bullet">
/// <item><see cref="Orchestrated"/>: every class that starts the real AppHost or a container engine (AppHost/,
/// Containers/). They share DCP, the engines and the images.</item>
/// <item><see cref="Processes"/>: every class that starts the services as processes, drives Chromium, builds the
/// services or times a spin (Processes/, Pages/, and the heavy checks of Repository/ and Analyzers/). The process
/// systems it shares (<see cref="SharedSystem"/>) each start with the first test that uses it and stay up, idle, until
/// the lane ends.</item>
/// </list>
/// The in-process tests (Lessons/, the rest of Repository/ and Analyzers/) are a collection per class and fill the
/// gaps. A test that asserts a timing never runs beside another of its lane; beside the other lane, it must hold on a
/// loaded machine (docs/contributing.md).
/// </summary>
public static class Lanes
{
    public const string Orchestrated = "lane: the AppHost and the container engines";

    public const string Processes = "lane: the services as processes, Chromium, builds";

    /// <summary>
    /// Classes that assert no timing and share none of the processes lane's systems, run in the orchestrated lane to even
    /// the two lanes' lengths: the processes lane is the longer (18.5 min against 12.5 in a run side by side), and these
    /// took 3 min of it. BenchTests checks its figures for being measured and consistent, never fast;
    /// RepositoryRulesTests builds the services and reads the analyzers' findings.
    /// </summary>
    public static readonly IReadOnlySet<Type> Balancing = new HashSet<Type> { typeof(Processes.BenchTests), typeof(Analyzers.RepositoryRulesTests) };
}

[CollectionDefinition(Lanes.Orchestrated)]
public sealed class OrchestratedLane;

[CollectionDefinition(Lanes.Processes)]
public sealed class ProcessesLane : ICollectionFixture<SmallSystemFixture>, ICollectionFixture<EdgeSystemFixture>, ICollectionFixture<FullSizeSystemFixture>;
