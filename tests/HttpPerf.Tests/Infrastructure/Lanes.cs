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
    /// Classes that start processes but run in the orchestrated lane. HighLatencyTests' delay line moves every packet
    /// through a user-space process for a minute: beside it, the container tests' killed replicas left the Gateway's
    /// requests queued to its limit for the rest of the load (one run, the only one in which the two overlapped).
    /// BenchTests and RepositoryRulesTests ran here too while the processes lane was the longer; with the swarm's test
    /// (its three nodes up, about 3 minutes) the orchestrated lane ended at 15.4 min and the processes lane at 11.1
    /// (CI run 31), so they are back in theirs.
    /// </summary>
    /// <summary>
    /// Where one lane saturates the machine (the Docker test's highest load: 16 full catalogs, uploads and downloads at
    /// once) and the other times a frozen replica's cost, they take turns: each takes this around its phase. CI run 14
    /// had the two overlap and every route of the frozen-replica test stalled for up to 17 s, the Gateway's own catalog
    /// route too, which no Catalog replica's freeze explains; they overlapped in run 12 and passed. The wait is at most
    /// the other's phase (about a minute either way). The swarm's <c>up</c> (SwarmFixture: three nodes, the images
    /// loaded into each, every service started) is such a phase too: of CI runs 40 to 49 and the final three, the
    /// frozen-replica test failed in four of the five that ran it during an <c>up</c> (lists at 1.1 to 3.6 s against a
    /// bound near 1.05 s) and in none of the eight that did not. Its wait is at most the <c>up</c> (about 2 minutes).
    /// </summary>
    public static async Task<IDisposable> TakeTurnAsync(CancellationToken cancellationToken)
    {
        await Turn.WaitAsync(cancellationToken).ConfigureAwait(false);
        return new Released();
    }

    private static readonly SemaphoreSlim Turn = new(1, 1);

    private sealed class Released : IDisposable
    {
        private int released;

        public void Dispose()
        {
            if (Interlocked.Exchange(ref released, 1) == 0)
            {
                Turn.Release();
            }
        }
    }

    public static readonly IReadOnlySet<Type> Balancing = new HashSet<Type> { typeof(Processes.HighLatencyTests) };
}

[CollectionDefinition(Lanes.Orchestrated)]
public sealed class OrchestratedLane;

[CollectionDefinition(Lanes.Processes)]
public sealed class ProcessesLane : ICollectionFixture<SmallSystemFixture>, ICollectionFixture<EdgeSystemFixture>, ICollectionFixture<FullSizeSystemFixture>;
