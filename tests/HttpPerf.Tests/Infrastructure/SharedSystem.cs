namespace HttpPerf.Tests.Infrastructure;

/// <summary>
/// A system the processes lane shares (a collection fixture of <see cref="ProcessesLane"/>), started when the first test
/// that uses it begins, not when the lane does: a filter that runs one lesson's tests starts only the systems they use.
/// Once started it stays up, idle between tests, until the lane ends.
/// </summary>
public abstract class SharedSystem : IAsyncLifetime
{
    private readonly Lazy<Task> _started;

    protected SharedSystem() => _started = new(() => StartAsync(TestContext.Current.CancellationToken));

    /// <summary>The start, made once, by the first test that asks (<see cref="SystemTests{TSystem}"/> asks before each test).</summary>
    public Task StartedAsync() => _started.Value;

    protected abstract Task StartAsync(CancellationToken cancel);

    protected abstract ValueTask StopAsync();

    public ValueTask InitializeAsync() => ValueTask.CompletedTask;

    public async ValueTask DisposeAsync()
    {
        if (_started.IsValueCreated)
        {
            await StopAsync();
        }

        GC.SuppressFinalize(this);
    }
}

/// <summary>A class of tests on a <see cref="SharedSystem"/>: before each test, the system is started if it is not yet.</summary>
public abstract class SystemTests<TSystem>(TSystem system) : IAsyncLifetime
    where TSystem : SharedSystem
{
    protected TSystem Fixture { get; } = system;

    public virtual async ValueTask InitializeAsync() => await Fixture.StartedAsync();

    public virtual ValueTask DisposeAsync()
    {
        GC.SuppressFinalize(this);
        return ValueTask.CompletedTask;
    }
}
