using Aspire.Hosting.ApplicationModel;

namespace HttpPerf.Tests.Infrastructure;

/// <summary>
/// The real AppHost a test starts with its dashboard on, in process mode (AppHost/AppHostFixture.cs) or container mode
/// (Containers/ContainerModeFixture.cs): what a run needs to log in to the dashboard, read its telemetry API and run its
/// commands.
/// </summary>
public interface IDashboardAppHost : IAsyncLifetime
{
    Uri Dashboard { get; }

    /// <summary>The key of the dashboard's telemetry API (<c>x-api-key</c>).</summary>
    string DashboardApiKey { get; }

    /// <summary>The dashboard's login token: <c>{Dashboard}/login?t={token}</c>, as the AppHost prints it.</summary>
    string BrowserToken { get; }

    ResourceCommandService Commands { get; }

    /// <summary>Why it cannot run on this machine (no container engine), or null.</summary>
    string? Unavailable => null;
}
