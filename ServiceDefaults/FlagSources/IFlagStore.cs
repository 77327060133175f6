namespace HttpPerf.ServiceDefaults.FlagSources;

/// <summary>
/// Where the system's flags are kept, for the Gateway's admin API and landing page: the shared flags file, or
/// Redis when <c>ConnectionStrings:flags</c> is set. The services read the same place through configuration
/// (<see cref="FlagsFileSource"/>, <see cref="RedisFlagsSource"/>).
/// </summary>
public interface IFlagStore
{
    /// <summary>The variant of every known flag; <see cref="FlagStoreUnavailableException"/> when the store cannot say.</summary>
    Task<IReadOnlyDictionary<string, string>> ReadAsync(CancellationToken cancellationToken = default);

    /// <summary>Sets some flags, keeping the others; <see cref="FlagStoreUnavailableException"/> when nothing could be written.</summary>
    Task SetAsync(IReadOnlyDictionary<string, string> changes, CancellationToken cancellationToken = default);
}
