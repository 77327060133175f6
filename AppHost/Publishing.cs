using Microsoft.Extensions.Configuration;
using Aspire.Hosting.Publishing;

/// <summary>
/// What only publishing does (docs/deploy.md). Every method here leaves run mode (<c>dotnet run -c Release
/// --project AppHost</c>) exactly as it was: no Docker, no Redis, the flags file, one process per service.
/// </summary>
/// <remarks>
/// Core Aspire 13.6 publishes a manifest (<c>aspire publish --publisher manifest</c>), the deployment contract a
/// deployment tool reads. Its <c>project.v0</c> entries have no field for replicas or for a resource that waits to be
/// started, so the entries here carry two of their own, <c>replicas</c> and <c>explicitStart</c>, which a tool that
/// does not know them ignores. Compose and Helm publishing need Aspire.Hosting.Docker and Aspire.Hosting.Kubernetes,
/// which this repository's package mirror does not serve: docs/deploy.md shows the lines a user adds where they are.
/// </remarks>
internal static class Publishing
{
    /// <summary>The AppHost parameter <c>replicas</c>: replicas of Catalog.Api, Frontend.Api and Uploads.Api when published (default 2).</summary>
    public static IResourceBuilder<ParameterResource> AddReplicas(this IDistributedApplicationBuilder builder) =>
        builder.AddParameter("replicas", "2", publishValueAsDefault: true);

    /// <summary>Published, <paramref name="replicas"/> of the service (its manifest entry says <c>"replicas": "{replicas.value}"</c>).</summary>
    public static IResourceBuilder<ProjectResource> PublishWithReplicas(this IResourceBuilder<ProjectResource> service, IResourceBuilder<ParameterResource> replicas)
    {
        if (!service.ApplicationBuilder.ExecutionContext.IsPublishMode)
        {
            return service;
        }

        var count = service.ApplicationBuilder.Configuration.GetValue("Parameters:replicas", 2);
        return service
            .WithReplicas(count)
            .WithAnnotation(new HttpPerf.AppHost.Swarm.ReplicasParameterAnnotation(replicas.Resource))
            .WithManifestPublishingCallback(context => WriteProjectAsync(context, service.Resource,
                writer => writer.WriteString("replicas", $"{{{replicas.Resource.Name}.value}}")));
    }

    /// <summary>Published, the resource is marked not to start with the rest (<c>"explicitStart": true</c>), as in run mode.</summary>
    public static IResourceBuilder<ProjectResource> PublishAsExplicitStart(this IResourceBuilder<ProjectResource> service) =>
        service.ApplicationBuilder.ExecutionContext.IsPublishMode
            ? service.WithManifestPublishingCallback(context => WriteProjectAsync(context, service.Resource,
                writer => writer.WriteBoolean("explicitStart", true)))
            : service;

    /// <summary>Sets an environment variable in publish mode only.</summary>
    public static IResourceBuilder<ProjectResource> PublishWithEnvironment(this IResourceBuilder<ProjectResource> service, string name, string value) =>
        service.ApplicationBuilder.ExecutionContext.IsPublishMode ? service.WithEnvironment(name, value) : service;

    /// <summary>
    /// Published, Uploads.Api's data directory is the volume <c>uploads-data</c>, mounted into every replica at
    /// <see cref="HttpPerf.ServiceDefaults.Contract.SystemContract.UploadsContainerDataPath"/>, so any replica serves
    /// any upload. The deployment gives the volume to the image's "app" user (uid 1654): Kubernetes' <c>fsGroup</c>,
    /// or a <c>chown</c> run as root before the replicas start, as container mode does (docs/deploy.md).
    /// </summary>
    public static IResourceBuilder<ProjectResource> PublishWithUploadsVolume(this IResourceBuilder<ProjectResource> uploads) =>
        uploads.ApplicationBuilder.ExecutionContext.IsPublishMode
            ? uploads
                .WithAnnotation(new ContainerMountAnnotation("uploads-data", HttpPerf.ServiceDefaults.Contract.SystemContract.UploadsContainerDataPath, ContainerMountType.Volume, isReadOnly: false))
                .WithEnvironment(HttpPerf.ServiceDefaults.Contract.SystemContract.UploadsDataDirectory, HttpPerf.ServiceDefaults.Contract.SystemContract.UploadsContainerDataPath)
            : uploads;

    // The entry core Aspire writes for a project (type, path, args, env, bindings), and the fields of ours.
    private static async Task WriteProjectAsync(ManifestPublishingContext context, ProjectResource project, Action<System.Text.Json.Utf8JsonWriter> extra)
    {
        context.Writer.WriteString("type", "project.v0");
        context.Writer.WriteString("path", context.GetManifestRelativePath(project.GetProjectMetadata().ProjectPath));
        await context.WriteCommandLineArgumentsAsync(project);
        await context.WriteEnvironmentVariablesAsync(project);
        context.WriteBindings(project);
        extra(context.Writer);
    }
}
