namespace HttpPerf.ServiceDefaults.Contract;

/// <summary>One rung of a pitfall's ladder: its variant name (<see cref="PerfMode"/>) and what it does.</summary>
public sealed record PitfallVariant(string Name, string Does);
