namespace HttpPerf.Tests.Infrastructure;

/// <summary>What every test asks of the run it is in, named once (a static using of the project's): <see cref="Cancel"/>.</summary>
public static class TestRun
{
    /// <summary>The running test's token: cancelled when the run is stopped or the test times out.</summary>
    public static CancellationToken Cancel => TestContext.Current.CancellationToken;
}
