namespace HttpPerf.Tests.Infrastructure;

/// <summary>Tests that change flags: each starts and ends with no flags file, so every flag is optimized.</summary>
public abstract class FlagsFileResetTests(SmallSystemFixture fixture) : IAsyncLifetime
{
    protected SmallSystemFixture Fixture { get; } = fixture;

    public ValueTask InitializeAsync()
    {
        File.Delete(Fixture.System.FlagsFile);
        return ValueTask.CompletedTask;
    }

    public ValueTask DisposeAsync()
    {
        File.Delete(Fixture.System.FlagsFile);
        return ValueTask.CompletedTask;
    }
}
