using System.Diagnostics;
using System.Security.Cryptography;
using System.Text;
using Bench.Containers;
using Bench.LocalSystem;
using Microsoft.Extensions.Logging;

namespace HttpPerf.AppHost.Containers;

/// <summary>
/// Container mode's images: each service's image is built by the .NET SDK's own container support
/// (<c>dotnet publish -t:PublishContainer</c>, no Dockerfile) into the engine's local store, when it is missing or was
/// built from other sources. "Other sources" is a hash of every file the image is built from (the project's folder,
/// ServiceDefaults, the repository's build files), kept as the image's label <see cref="SourceLabel"/>: a checkout,
/// an edit, or a branch switch rebuilds exactly the images it touches, and nothing else does. Then the volumes the
/// containers mount as the image's "app" user are given to it (<see cref="GiveToAppAsync"/>).
/// </summary>
internal sealed class ServiceImages(ContainerSettings settings, string repositoryRoot, ILogger logger)
{
    /// <summary>The image label that holds the hash of the sources it was built from (Directory.Build.props sets it).</summary>
    public const string SourceLabel = "org.httpperf.source";

    // What a build or a run leaves in a project's folder (.gitignore): never part of an image's sources.
    private static readonly HashSet<string> IgnoredFolders = ["bin", "obj", "App_Data", ".data", "TestResults"];
    private static readonly HashSet<string> IgnoredExtensions = [".db", ".db-shm", ".db-wal", ".user"];

    private readonly ContainerEngine _engine = settings.Engine;

    /// <summary>Builds, one after the other (two cores), every image of <paramref name="projects"/> that is missing or stale.</summary>
    public async Task EnsureAsync(IEnumerable<ServiceImage> projects, CancellationToken cancellationToken)
    {
        foreach (var project in projects)
        {
            // --os linux: published for Linux on this machine's architecture, so the image holds that platform's native
            // libraries alone (without it, LoadGen's image carried SkiaSharp's for Windows and macOS: 578 MB, not 24 MB).
            List<string> arguments =
            [
                "publish", project.ProjectDirectory, "-c", "Release", "--os", "linux", "-t:PublishContainer", "--nologo", "-v:q",
                $"-p:ContainerRepository={project.Repository}", $"-p:ContainerImageTag={project.Tag}",
            ];
            if (settings.BaseImage is { Length: > 0 } baseImage)
            {
                arguments.Add($"-p:ContainerBaseImage={baseImage}");
            }

            if (settings.Runtime == "podman")
            {
                arguments.Add("-p:LocalRegistry=Podman");
            }

            // How it is built is part of the hash (the project's path is not: a clone elsewhere builds the same image).
            var hash = SourceHash(project.ProjectDirectory, arguments.Where(a => a != project.ProjectDirectory));
            var built = await _engine.TryRunAsync(["image", "inspect", "--format", $"{{{{index .Config.Labels \"{SourceLabel}\"}}}}", project.Reference], cancellationToken);
            if (built.Succeeded && built.Output.Trim() == hash)
            {
                logger.LogInformation("Image {Image} is up to date", project.Reference);
                continue;
            }

            logger.LogInformation("Building image {Image} with the .NET SDK ({Why})", project.Reference, built.Succeeded ? "sources changed" : "missing");
            var stopwatch = Stopwatch.StartNew();
            arguments.Add($"-p:HttpPerfSourceHash={hash}");
            // No time limit: the AppHost's stop cancels a build, which then stops rather than run on unseen.
            var publish = await ProgramRun.RunAsync("dotnet", arguments, Timeout.InfiniteTimeSpan, cancellationToken);
            if (!publish.Succeeded)
            {
                throw new InvalidOperationException($"Building the image {project.Reference} failed: {publish.Failure}");
            }

            logger.LogInformation("Built image {Image} in {Seconds:F1} s", project.Reference, stopwatch.Elapsed.TotalSeconds);
        }
    }

    /// <summary>
    /// Gives each volume to the image's "app" user before any container mounts it: <c>chown</c>, run as root in a
    /// container of the image that has no network and is removed once done. It is not a resource of the model: DCP
    /// keeps every container of the model on the system's network, and one that has exited it connects again every
    /// few seconds through the engine's CLI for as long as the system runs (docs/cost.md, "What was cut").
    /// </summary>
    public async Task GiveToAppAsync(IEnumerable<(AppOwnedVolumeAnnotation Volume, ServiceImage Image)> volumes, CancellationToken cancellationToken)
    {
        foreach (var (volume, image) in volumes)
        {
            var chown = await _engine.TryRunAsync(
                ["run", "--rm", "--network=none", "--user=0", "--entrypoint=chown", "-v", $"{volume.Name}:{volume.Path}", image.Reference, "app:app", volume.Path],
                cancellationToken);
            if (!chown.Succeeded)
            {
                throw new InvalidOperationException($"Giving the volume {volume.Name} to the app user of {image.Reference} failed: {chown.Failure}");
            }

            logger.LogInformation("Volume {Volume} belongs to the app user of {Image}", volume.Name, image.Reference);
        }
    }

    /// <summary>SHA-256 of the paths and contents of every file the project's image is built from, and of how it is built.</summary>
    public string SourceHash(string projectDirectory, IEnumerable<string> arguments)
    {
        string[] roots = [projectDirectory, Path.Combine(repositoryRoot, "ServiceDefaults")];
        var files = roots
            .SelectMany(root => Directory.EnumerateFiles(root, "*", SearchOption.AllDirectories)
                .Where(file => !Path.GetRelativePath(root, file).Split(Path.DirectorySeparatorChar).Any(IgnoredFolders.Contains))
                .Where(file => !IgnoredExtensions.Contains(Path.GetExtension(file))))
            .Concat(new[] { "Directory.Build.props", "Directory.Packages.props", "global.json" }.Select(name => Path.Combine(repositoryRoot, name)))
            .Select(Path.GetFullPath)
            .Order(StringComparer.Ordinal);
        using var sha = IncrementalHash.CreateHash(HashAlgorithmName.SHA256);
        sha.AppendData(Encoding.UTF8.GetBytes(string.Join('\0', arguments) + "\n"));
        foreach (var file in files)
        {
            sha.AppendData(Encoding.UTF8.GetBytes(Path.GetRelativePath(repositoryRoot, file) + "\n"));
            sha.AppendData(File.ReadAllBytes(file));
        }

        return Convert.ToHexStringLower(sha.GetHashAndReset())[..16];
    }
}

/// <summary>
/// A service's image, built from <paramref name="ProjectDirectory"/>: <c>{Repository}:{Tag}</c> in the engine's own
/// store, which Podman names <c>localhost/{Repository}:{Tag}</c> (<paramref name="Registry"/>) and Docker does not.
/// </summary>
internal sealed record ServiceImage(string ProjectDirectory, string? Registry, string Repository, string Tag)
{
    public string Reference => Registry is null ? $"{Repository}:{Tag}" : $"{Registry}/{Repository}:{Tag}";
}

/// <summary>Marks a container as running <paramref name="Image"/>, which container mode builds before anything starts.</summary>
internal sealed record ServiceImageAnnotation(ServiceImage Image) : IResourceAnnotation;

/// <summary>
/// Marks a container as mounting the volume <paramref name="Name"/> at <paramref name="Path"/> as its image's "app"
/// user, to whom container mode gives the volume before anything starts (<see cref="ServiceImages.GiveToAppAsync"/>).
/// </summary>
internal sealed record AppOwnedVolumeAnnotation(string Name, string Path) : IResourceAnnotation;
