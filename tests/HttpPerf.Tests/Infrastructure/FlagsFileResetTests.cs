namespace HttpPerf.Tests.Infrastructure;

/// <summary>Tests that change flags: each starts and ends with no flags file, so every flag is optimized.</summary>
public abstract class FlagsFileResetTests(SmallSystemFixture fixture) : SystemTests<SmallSystemFixture>(fixture)
{
    public override async ValueTask InitializeAsync()
    {
        await base.InitializeAsync();
        File.Delete(Fixture.System.FlagsFile);
    }

    public override async ValueTask DisposeAsync()
    {
        File.Delete(Fixture.System.FlagsFile);
        await base.DisposeAsync();
    }
}
