namespace HttpPerf.ServiceDefaults.FlagSources;

/// <summary>The flags cannot be read or written now: a flags file that does not parse, or Redis out of reach.</summary>
public sealed class FlagStoreUnavailableException(string message, Exception? inner = null) : Exception(message, inner);
