using Aspire.Hosting.Docker;
using Aspire.Hosting.Docker.Resources;
using Aspire.Hosting.Docker.Resources.ComposeNodes;
using Aspire.Hosting.Docker.Resources.ServiceNodes;
using Aspire.Hosting.Docker.Resources.ServiceNodes.Swarm;
using Microsoft.Extensions.Configuration;

/// <summary>Where `aspire publish` puts the system: a Docker Compose environment (the default) or a Kubernetes one.</summary>
/// <param name="Compose">The Compose environment, when publishing to Compose.</param>
/// <param name="Replicas">Replicas of Catalog.Api, Frontend.Api and Uploads.Api (AppHost parameter <c>replicas</c>, default 2).</param>
internal sealed record DeploymentTarget(IResourceBuilder<DockerComposeEnvironmentResource>? Compose, int Replicas);

/// <summary>
/// What only publishing does (docs/deploy.md). Every method here leaves run mode (<c>dotnet run --project AppHost</c>)
/// exactly as it was: no Docker, no Redis, the flags file.
/// </summary>
/// <remarks>
/// What Aspire 13.1.3's Compose publisher does not do by itself, and this file does:
/// health checks and <c>depends_on: service_healthy</c> (it writes <c>service_started</c>), <c>deploy.replicas</c>
/// (it ignores <c>WithReplicas</c>), Compose profiles (it ignores <c>WithExplicitStart</c>), a fixed host port,
/// a fixed container port (else every service's port is one more .env entry), and required .env entries
/// (it writes <c>ADMIN_KEY=</c> empty, and an empty key leaves the admin routes unmapped).
/// </remarks>
internal static class PublishModeExtensions
{
    /// <summary>The Gateway's port on the Docker host: <c>http://localhost:8080/</c>.</summary>
    public const int GatewayHostPort = 8080;

    /// <summary>The Aspire dashboard's port on the Docker host: <c>http://localhost:18888/</c>.</summary>
    public const int DashboardHostPort = 18888;

    // Every service listens on the ASP.NET Core images' own port (their ASPNETCORE_HTTP_PORTS is 8080).
    private const int ContainerHttpPort = 8080;

    // The SDK builds each image with the app in /app/ (ContainerWorkingDirectory), run as `dotnet /app/<Assembly>.dll`
    // by the non-root user "app" (UID 1654), whose home, /home/app, is the one directory of the image it owns.
    private const string ContainerAppDirectory = "/app/";

    // A new named volume takes the owner of the directory it is mounted on: mounted on a path the image lacks it
    // would be root's, and the "app" user could not write it. So the uploads volume is mounted on /home/app.
    private const string UploadsVolume = "uploads-data";
    private const string UploadsMountPath = "/home/app";
    private const string UploadsDataDirectory = "/home/app/uploads";

    // .env entries without which the deployment must not start: Compose's ${NAME:?message} stops `up` and `config`
    // with the message while the entry is empty. The names are the publisher's, from the parameters'.
    private static readonly Dictionary<string, string> RequiredEnvEntries = new()
    {
        ["ADMIN_KEY"] = "key for the Gateway's /admin routes, 32 or more letters and digits",
        ["FLAGS_PASSWORD"] = "password of the flags Redis, letters and digits (no commas)",
    };

    /// <summary>
    /// In publish mode, the Docker Compose environment (with the Aspire dashboard on <see cref="DashboardHostPort"/>),
    /// and the replica count from the AppHost parameter <c>replicas</c> (<c>--Parameters:replicas 3</c>, default 2).
    /// </summary>
    public static DeploymentTarget AddDeploymentTarget(this IDistributedApplicationBuilder builder)
    {
        // Read when publishing: deploy.replicas is a number in the Compose file, not a variable Compose could fill in.
        var replicas = builder.Configuration.GetValue("Parameters:replicas", 2);

        if (!builder.ExecutionContext.IsPublishMode)
        {
            return new(null, replicas);
        }

        var compose = builder.AddDockerComposeEnvironment("compose")
            .WithDashboard(dashboard => dashboard.WithHostPort(DashboardHostPort))
            .ConfigureComposeFile(RequireEnvEntries)
            .ConfigureEnvFile(DescribeEnvEntries);

        return new(compose, replicas);
    }

    /// <summary>
    /// Publishes an HTTP service: listening on port 8080, with a health check that runs the service's own
    /// <c>--health-probe</c> (the images have no curl), started only once what it waits for is healthy,
    /// <paramref name="replicas"/> of it, and with <paramref name="hostPort"/> its one port on the Docker host.
    /// </summary>
    public static IResourceBuilder<ProjectResource> PublishAsService(
        this IResourceBuilder<ProjectResource> service, DeploymentTarget deployment, int replicas = 1, int? hostPort = null)
    {
        if (deployment.Compose is null)
        {
            return service;
        }

        // Without a target port the publisher makes the port a .env entry (CATALOG_PORT=) that must be filled in.
        service.WithEndpoint("http", endpoint => endpoint.TargetPort = ContainerHttpPort, createIfNotExists: false)
            .WithEndpoint("https", endpoint => endpoint.TargetPort = ContainerHttpPort, createIfNotExists: false);

        var assemblyPath = ContainerAppDirectory + Path.GetFileNameWithoutExtension(service.Resource.GetProjectMetadata().ProjectPath) + ".dll";

        return service.PublishAsDockerComposeService((_, compose) =>
        {
            // The probe GETs http://127.0.0.1:<HTTP_PORTS>/health in a second process of the service: exit 0 on 200.
            compose.Healthcheck = new Healthcheck
            {
                Test = ["CMD", "dotnet", assemblyPath, "--health-probe"],
                Interval = "10s",
                Timeout = "5s",
                Retries = 3,
                // Catalog.Api seeds its SQLite copy from 86,000 products before it answers.
                StartPeriod = "60s",
            };
            WaitUntilHealthy(compose);

            if (replicas > 1)
            {
                compose.Deploy = new Deploy { Replicas = replicas };
            }

            if (hostPort is int port)
            {
                // One fixed mapping instead of the publisher's random host port per endpoint.
                compose.Ports = [$"{port}:{ContainerHttpPort}"];
            }
        });
    }

    /// <summary>Publishes LoadGen in a Compose profile: <c>docker-compose --profile load up</c> starts it, plain <c>up</c> does not.</summary>
    public static IResourceBuilder<ProjectResource> PublishAsLoadProfile(this IResourceBuilder<ProjectResource> loadGen, DeploymentTarget deployment, string profile)
    {
        if (deployment.Compose is null)
        {
            return loadGen;
        }

        // Its control endpoint (PUT /rate, /mode) on the images' port too, instead of one more .env entry.
        loadGen.WithEndpoint("control", endpoint => endpoint.TargetPort = ContainerHttpPort, createIfNotExists: false);

        return loadGen.PublishAsDockerComposeService((_, compose) =>
        {
            compose.Profiles = [profile];
            WaitUntilHealthy(compose);
        });
    }

    /// <summary>The flags Redis: a health check with the image's redis-cli, so services can wait until it answers.</summary>
    public static IResourceBuilder<RedisResource> PublishAsFlagsStore(this IResourceBuilder<RedisResource> redis, DeploymentTarget deployment)
    {
        if (deployment.Compose is null)
        {
            return redis;
        }

        return redis.PublishAsDockerComposeService((_, compose) =>
        {
            compose.Healthcheck = new Healthcheck
            {
                // REDIS_PASSWORD is the container's own variable ($$ keeps Compose from substituting it), and
                // REDISCLI_AUTH keeps it off redis-cli's command line.
                Test = ["CMD-SHELL", "REDISCLI_AUTH=\"$$REDIS_PASSWORD\" redis-cli ping | grep -q PONG"],
                Interval = "5s",
                Timeout = "3s",
                Retries = 5,
                StartPeriod = "5s",
            };
        });
    }

    /// <summary>
    /// Uploads.Api's data directory on the named volume <c>uploads-data</c>, mounted into every replica, so any
    /// replica serves any upload.
    /// </summary>
    public static IResourceBuilder<ProjectResource> PublishWithUploadsVolume(this IResourceBuilder<ProjectResource> uploads, DeploymentTarget deployment)
    {
        if (deployment.Compose is null)
        {
            return uploads;
        }

        return uploads
            .WithAnnotation(new ContainerMountAnnotation(UploadsVolume, UploadsMountPath, ContainerMountType.Volume, isReadOnly: false))
            .WithEnvironment("Uploads__DataDirectory", UploadsDataDirectory);
    }

    /// <summary>Sets an environment variable in publish mode only.</summary>
    public static IResourceBuilder<ProjectResource> PublishWithEnvironment(this IResourceBuilder<ProjectResource> service, DeploymentTarget deployment, string name, string value) =>
        deployment.Compose is null ? service : service.WithEnvironment(name, value);

    // WaitFor writes service_started; every service here has a health check, so wait for it to pass.
    private static void WaitUntilHealthy(Service compose)
    {
        foreach (var dependency in compose.DependsOn.Values)
        {
            dependency.Condition = "service_healthy";
        }
    }

    // ${ADMIN_KEY} -> ${ADMIN_KEY:?...}, wherever the publisher wrote it.
    private static void RequireEnvEntries(ComposeFile file)
    {
        foreach (var service in file.Services.Values)
        {
            foreach (var (name, value) in service.Environment.ToList())
            {
                service.Environment[name] = Require(value);
            }

            service.Command = [.. service.Command.Select(Require)];
        }

        static string Require(string value)
        {
            foreach (var (entry, meaning) in RequiredEnvEntries)
            {
                value = value.Replace($"${{{entry}}}", $"${{{entry}:?set {entry} in .env: {meaning}}}", StringComparison.Ordinal);
            }

            return value;
        }
    }

    private static void DescribeEnvEntries(IDictionary<string, CapturedEnvironmentVariable> entries)
    {
        foreach (var (name, entry) in entries)
        {
            if (RequiredEnvEntries.TryGetValue(name, out var meaning))
            {
                entry.Description = $"Required: {meaning} (docs/deploy.md)";
            }
            else if (name.EndsWith("_IMAGE", StringComparison.Ordinal))
            {
                entry.Description = $"Image of {name[..^"_IMAGE".Length].ToLowerInvariant()}, e.g. {name[..^"_IMAGE".Length].ToLowerInvariant()}:latest (docs/deploy.md says how to build it)";
            }
        }
    }
}
