using System.Text.Json;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.Configuration.Json;
using Microsoft.Extensions.Logging;

namespace HttpPerf.ServiceDefaults.FlagSources;

/// <summary>
/// The flags file as a configuration source. A plain <c>AddJsonFile</c> empties its data when a reload
/// fails to parse, which would flip every flag back to optimized on a half-typed hand edit, and says nothing.
/// This one keeps the last good flags and reports the parse error to <see cref="FlagsFileWarnings"/>.
/// </summary>
internal sealed class FlagsFileSource : JsonConfigurationSource
{
    public FlagsFileWarnings Warnings { get; } = new();

    public override IConfigurationProvider Build(IConfigurationBuilder builder)
    {
        EnsureDefaults(builder);
        return new Provider(this);
    }

    private sealed class Provider(FlagsFileSource source) : JsonConfigurationProvider(source)
    {
        public override void Load(Stream stream)
        {
            try
            {
                base.Load(stream); // replaces Data only when the whole file parsed
                source.Warnings.Loaded();
            }
            catch (FormatException error)
            {
                source.Warnings.Failed(source.FileProvider?.GetFileInfo(source.Path!).PhysicalPath ?? source.Path!, error);
            }
        }
    }
}
