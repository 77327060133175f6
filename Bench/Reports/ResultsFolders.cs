namespace Bench.Reports;

/// <summary>
/// Where under docs/results each bench commits its report, in one place: the bench writes there, and the pages' marked
/// tables and the tests read from there.
/// </summary>
public static class ResultsFolders
{
    /// <summary><c>bench</c>: the ladder of every lesson's rungs; a marker without <c>from</c> quotes it.</summary>
    public const string Main = "bench";

    public const string Latency = "latency";

    public const string Faults = "faults";

    public const string Protocols = "protocols";

    public const string Grpc = "grpc";

    public const string AsRun = "as-run";

    public const string Memory = "memory";

    public const string Blocking = "blocking";
}
