namespace HttpPerf.ServiceDefaults.FlagSources;

/// <summary>The shared flags file (<c>FeatureFlags:File</c>): the default, which needs nothing but a disk.</summary>
public sealed class FileFlagStore(string path) : IFlagStore
{
    public string Path { get; } = path;

    public Task<IReadOnlyDictionary<string, string>> ReadAsync(CancellationToken cancellationToken = default) =>
        FlagsFile.ReadAsync(Path, cancellationToken);

    public Task SetAsync(IReadOnlyDictionary<string, string> changes, CancellationToken cancellationToken = default) =>
        FlagsFile.SetAsync(Path, changes, cancellationToken);
}
