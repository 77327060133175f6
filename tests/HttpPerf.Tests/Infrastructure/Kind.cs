namespace HttpPerf.Tests.Infrastructure;

/// <summary>
/// The trait every test class carries, one per folder, so one kind runs alone (docs/contributing.md):
/// <c>dotnet test tests/HttpPerf.Tests --filter Kind=Lessons</c> runs the lessons in-process in seconds.
/// </summary>
public static class Kind
{
    public const string Name = "Kind";

    /// <summary>Each lesson's rungs in-process: the same bytes, the same problems, on a test server or a fake request.</summary>
    public const string Lessons = "Lessons";

    /// <summary>The docs, the ladders and the source tree checked against the code; the benchmarks smoke-run once.</summary>
    public const string Repository = "Repository";

    /// <summary>The rules of Analyzers/ over snippets, their fixes, and this repository's services built with them.</summary>
    public const string Analyzers = "Analyzers";

    /// <summary>The services as processes (LoadGen's LocalSystem): HTTP through the Gateway, flags, faults, telemetry.</summary>
    public const string Processes = "Processes";

    /// <summary>The Gateway's pages in Chromium.</summary>
    public const string Pages = "Pages";

    /// <summary>The real AppHost under Aspire.Hosting.Testing: the dashboard, its commands, its telemetry.</summary>
    public const string AppHost = "AppHost";

    /// <summary>The AppHost's container mode under podman: images, replicas, faults.</summary>
    public const string Containers = "Containers";
}
