using LoadGen.Load;

namespace LoadGen.Control;

/// <summary>
/// <c>GET /status</c>: the live load as the dashboard shows it. <see cref="Until"/> is null for a run that goes on
/// until stopped; <see cref="Requests"/> and <see cref="Errors"/> count every scenario and mode since
/// <see cref="RunningSince"/>.
/// </summary>
public sealed record LoadStatus(
    bool Running, DateTimeOffset? RunningSince, DateTimeOffset? Until, double Rate, string Mode, long InFlight,
    long Requests, long Errors, bool Measuring, IReadOnlyList<ScenarioStatus> Scenarios)
{
    public static LoadStatus Of(OpenModelRunner runner, ModeControl modes, bool measuring)
    {
        var scenarios = runner.Current.Select(ScenarioStatus.Of).ToList();
        return new LoadStatus(
            runner.IsRunning, runner.RunningSince, runner.Until, runner.Rate.PerSecond, modes.Name, runner.InFlight,
            scenarios.Sum(s => s.Requests), scenarios.Sum(s => s.Errors), measuring, scenarios);
    }
}

/// <summary>One scenario in one mode so far (<see cref="Requests"/> counts the failed ones too); <see cref="ServedBy"/> counts what served it (naive, optimized, mixed, none).</summary>
public sealed record ScenarioStatus(string Scenario, string Mode, long Requests, long Errors, double P50Ms, double P99Ms, IReadOnlyDictionary<string, long> ServedBy)
{
    public static ScenarioStatus Of(ModeStats stats)
    {
        // Keyed "scenario/mode"; a scenario may itself be a path ("/api/products/flags").
        var slash = stats.Mode.LastIndexOf('/');
        var (scenario, mode) = slash > 0 ? (stats.Mode[..slash], stats.Mode[(slash + 1)..]) : (stats.Mode, "");
        return new ScenarioStatus(scenario, mode, stats.Count, stats.Errors, Math.Round(stats.PercentileMs(50), 1), Math.Round(stats.PercentileMs(99), 1), stats.Served);
    }
}
