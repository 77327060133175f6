using System.Text.RegularExpressions;
using Aspire.Hosting.Docker;
using Aspire.Hosting.Docker.Resources;
using Aspire.Hosting.Docker.Resources.ComposeNodes;
using Aspire.Hosting.Docker.Resources.ServiceNodes;
using Aspire.Hosting.Docker.Resources.ServiceNodes.Swarm;
using Aspire.Hosting.Kubernetes;
using Aspire.Hosting.Kubernetes.Resources;
using Microsoft.Extensions.Configuration;
using HttpPerf.ServiceDefaults;
using Service = Aspire.Hosting.Docker.Resources.ComposeNodes.Service;

// Opt-in (docs/deploy.md): compiled only with `-p:ContainerPublishers=true`, which also references
// Aspire.Hosting.Docker and Aspire.Hosting.Kubernetes. Neither package is served by this repository's package mirror,
// so this file was written and checked against Aspire 13.1.3 (built from source, compose and helm output validated)
// and has not been compiled against 13.6 here.

/// <summary>The hook core publishing calls (Publishing.cs): Compose or Helm publishing for every resource.</summary>
internal static partial class Publishing
{
    static partial void AddContainerPublishers(IDistributedApplicationBuilder builder)
    {
        var deployment = builder.AddDeploymentTarget();
        foreach (var name in new[] { SystemContract.Catalog, SystemContract.Frontend, SystemContract.Uploads })
        {
            builder.CreateResourceBuilder<ProjectResource>(name).PublishAsService(deployment, deployment.Replicas);
        }

        builder.CreateResourceBuilder<ProjectResource>(SystemContract.Gateway).PublishAsService(deployment, hostPort: PublishModeExtensions.GatewayHostPort);
        builder.CreateResourceBuilder<ProjectResource>(SystemContract.Uploads).PublishWithUploadsVolume(deployment);
        builder.CreateResourceBuilder<ProjectResource>(SystemContract.LoadGen).PublishAsLoadProfile(deployment, profile: "load");
        builder.CreateResourceBuilder<RedisResource>(SystemContract.FlagsConnectionName).PublishAsFlagsStore(deployment);
    }
}

/// <summary>Where `aspire publish` puts the system: a Docker Compose environment (the default) or a Kubernetes one.</summary>
/// <param name="Compose">The Compose environment, when publishing to Compose.</param>
/// <param name="Kubernetes">The Kubernetes environment (a Helm chart), with <c>--Deployment:Target kubernetes</c>.</param>
/// <param name="Replicas">Replicas of Catalog.Api, Frontend.Api and Uploads.Api (AppHost parameter <c>replicas</c>, default 2).</param>
internal sealed record DeploymentTarget(
    IResourceBuilder<DockerComposeEnvironmentResource>? Compose,
    IResourceBuilder<KubernetesEnvironmentResource>? Kubernetes,
    int Replicas);

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
/// For Kubernetes, the values.yaml entries its templates read and it leaves out, and what else its chart gets wrong
/// (see <see cref="MendKubernetesTemplates"/>).
/// </remarks>
internal static partial class PublishModeExtensions
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
    private const long ContainerAppUserId = 1654;

    private const string UploadsVolume = "uploads-data";

    // .env entries without which the deployment must not start: Compose's ${NAME:?message} stops `up` and `config`
    // with the message while the entry is empty. The names are the publisher's, from the parameters'.
    private static readonly Dictionary<string, string> RequiredEnvEntries = new()
    {
        ["ADMIN_KEY"] = "key for the Gateway's /admin routes, 32 or more letters and digits",
        ["FLAGS_PASSWORD"] = "password of the flags Redis, letters and digits (no commas)",
    };

    // Kubernetes: for each secret parameter, the values.yaml entry 13.1.3 does write (see MendKubernetesTemplates).
    private static readonly Dictionary<string, string> WrittenSecretValues = new()
    {
        ["flags_password"] = ".Values.secrets.flags.REDIS_PASSWORD",
        ["admin_key"] = ".Values.secrets.gateway.Admin__Key",
    };

    /// <summary>
    /// In publish mode, the Docker Compose environment (with the Aspire dashboard on <see cref="DashboardHostPort"/>),
    /// or with <c>--Deployment:Target kubernetes</c> the Kubernetes one, and the replica count from the AppHost
    /// parameter <c>replicas</c> (<c>--Parameters:replicas 3</c>, default 2).
    /// </summary>
    public static DeploymentTarget AddDeploymentTarget(this IDistributedApplicationBuilder builder)
    {
        // Read when publishing: deploy.replicas is a number in the Compose file, not a variable Compose could fill in.
        var replicas = builder.Configuration.GetValue("Parameters:replicas", 2);

        if (!builder.ExecutionContext.IsPublishMode)
        {
            return new(null, null, replicas);
        }

        if (string.Equals(builder.Configuration["Deployment:Target"], "kubernetes", StringComparison.OrdinalIgnoreCase))
        {
            return new(null, builder.AddKubernetesEnvironment("k8s").WithProperties(k8s => k8s.HelmChartName = "httpperf"), replicas);
        }

        var compose = builder.AddDockerComposeEnvironment("compose")
            .WithDashboard(dashboard => dashboard.WithHostPort(DashboardHostPort))
            .ConfigureComposeFile(RequireEnvEntries)
            .ConfigureEnvFile(DescribeEnvEntries);

        return new(compose, null, replicas);
    }

    /// <summary>
    /// Publishes an HTTP service: listening on port 8080, with a health check that runs the service's own
    /// <c>--health-probe</c> (the images have no curl), started only once what it waits for is healthy,
    /// <paramref name="replicas"/> of it, and with <paramref name="hostPort"/> its one port on the Docker host.
    /// </summary>
    public static IResourceBuilder<ProjectResource> PublishAsService(
        this IResourceBuilder<ProjectResource> service, DeploymentTarget deployment, int replicas = 1, int? hostPort = null)
    {
        if (!service.ApplicationBuilder.ExecutionContext.IsPublishMode)
        {
            return service;
        }

        ListenOnContainerPort(service);

        if (deployment.Kubernetes is not null)
        {
            // The kubelet GETs /health itself; a Service sends traffic only to ready pods.
#pragma warning disable ASPIREPROBES001 // Experimental in 13.1.3; the Kubernetes publisher turns it into a readinessProbe.
            service.WithHttpProbe(ProbeType.Readiness, "/health");
#pragma warning restore ASPIREPROBES001
            return service.WithReplicas(replicas).PublishAsKubernetesService(MendKubernetesTemplates);
        }

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
                // One fixed mapping instead of the publisher's random host port.
                compose.Ports = [$"{port}:{ContainerHttpPort}"];
            }
        });
    }

    /// <summary>
    /// Publishes LoadGen so that it does not start with the rest: in the Compose profile <paramref name="profile"/>
    /// (<c>docker compose --profile load up</c>), or in Kubernetes as a Deployment of 0 replicas, to scale to 1.
    /// </summary>
    public static IResourceBuilder<ProjectResource> PublishAsLoadProfile(this IResourceBuilder<ProjectResource> loadGen, DeploymentTarget deployment, string profile)
    {
        if (!loadGen.ApplicationBuilder.ExecutionContext.IsPublishMode)
        {
            return loadGen;
        }

        // Its control endpoint (PUT /rate, /mode) on the images' port too, instead of one more .env entry.
        loadGen.WithEndpoint("control", endpoint => endpoint.TargetPort = ContainerHttpPort, createIfNotExists: false);

        if (deployment.Kubernetes is not null)
        {
            return loadGen.PublishAsKubernetesService(resource =>
            {
                MendKubernetesTemplates(resource);
                if (resource.Workload is Deployment workload)
                {
                    workload.Spec.Replicas = 0;
                }
            });
        }

        return loadGen.PublishAsDockerComposeService((_, compose) =>
        {
            compose.Profiles = [profile];
            WaitUntilHealthy(compose);
        });
    }

    /// <summary>The flags Redis: a health check with the image's redis-cli, so services can wait until it answers.</summary>
    public static IResourceBuilder<RedisResource> PublishAsFlagsStore(this IResourceBuilder<RedisResource> redis, DeploymentTarget deployment)
    {
        if (deployment.Kubernetes is not null)
        {
            return redis.PublishAsKubernetesService(resource =>
            {
                MendKubernetesTemplates(resource);

                // 13.1.3 hands the container /bin/sh with redis-server's arguments one by one, its run-mode form, and sh
                // would read "redis-server" as a script file. Give sh one -c line, as the Compose file has it.
                var container = resource.Workload!.PodTemplate.Spec.Containers[0];
                if (container.Args is [not "-c", ..])
                {
                    var line = string.Join(' ', container.Args);
                    container.Args.Clear();
                    container.Args.AddRange(["-c", line]);
                }
            });
        }

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
    /// Uploads.Api's data directory on the volume <c>uploads-data</c>, mounted into every replica, so any replica
    /// serves any upload: a named volume in Compose, a ReadWriteMany claim in Kubernetes.
    /// </summary>
    public static IResourceBuilder<ProjectResource> PublishWithUploadsVolume(this IResourceBuilder<ProjectResource> uploads, DeploymentTarget deployment)
    {
        if (!uploads.ApplicationBuilder.ExecutionContext.IsPublishMode)
        {
            return uploads;
        }

        // The mount and Uploads__DataDirectory come from core publishing (Publishing.PublishWithUploadsVolume).
        if (deployment.Kubernetes is null)
        {
            return uploads;
        }

        // 13.1.3 backs a named volume with an emptyDir by default, one per pod; the replicas must share one.
        return uploads.PublishAsKubernetesService(resource =>
        {
            var pod = resource.Workload!.PodTemplate.Spec;
            var volume = pod.Volumes.Single(v => v.Name == UploadsVolume);
            volume.EmptyDir = null;
            volume.PersistentVolumeClaim = new() { ClaimName = UploadsVolume };

            // A claim's new volume is root's: the group "app" (fsGroup) may write it.
            pod.SecurityContext ??= new();
            pod.SecurityContext.FsGroup = ContainerAppUserId;

            // 13.1.3's claim type starts with empty dataSource, dataSourceRef and selector objects, which the API
            // server rejects (a data source needs a kind and a name) or which stop dynamic provisioning (a selector).
            var claim = new PersistentVolumeClaim { Metadata = { Name = UploadsVolume } };
            claim.Spec.DataSource = null!;
            claim.Spec.DataSourceRef = null!;
            claim.Spec.Selector = null!;
            claim.Spec.AccessModes.Add("ReadWriteMany");
            // Uploads.Api's quota (Uploads__MaxStoredBytes) is 10 GiB, and 1 GiB of the disk is kept free.
            claim.Spec.Resources.Requests["storage"] = "12Gi";
            resource.AdditionalResources.Add(claim);
        });
    }

    // Without a target port, the Compose publisher makes the port a .env entry (CATALOG_PORT=) to fill in, and
    // the Kubernetes one a Helm expression that keeps every URL and HTTP_PORTS out of values.yaml. The default
    // https endpoint would listen nowhere (the images serve plain HTTP), and in Kubernetes its Service port
    // would repeat 8080.
    private static void ListenOnContainerPort(IResourceBuilder<ProjectResource> service)
    {
        service.WithEndpoint("http", endpoint => endpoint.TargetPort = ContainerHttpPort, createIfNotExists: false);

        foreach (var https in service.Resource.Annotations.OfType<EndpointAnnotation>().Where(e => e.Name == "https").ToList())
        {
            service.Resource.Annotations.Remove(https);
        }
    }

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
                var image = name[..^"_IMAGE".Length].ToLowerInvariant();
                entry.Description = $"Image of {image}, e.g. {image}:latest (docs/deploy.md says how to build it)";
            }
        }
    }

    /// <summary>
    /// Mends what 13.1.3's Kubernetes publisher gets wrong in a resource's templates. Its templates read a secret
    /// parameter under its own name in every resource that uses it (<c>.Values.secrets.catalog.flags_password</c>,
    /// <c>.Values.secrets.gateway.admin_key</c>), but values.yaml holds it once, under the variable it was given to
    /// (<c>secrets.flags.REDIS_PASSWORD</c>, <c>secrets.gateway.Admin__Key</c>), and leaves out every value that
    /// holds an expression: point the templates at the entries values.yaml has, and make Helm refuse to install while
    /// one is empty. Its probes say <c>scheme: "http"</c>, which the API server refuses: it wants "HTTP".
    /// </summary>
    private static void MendKubernetesTemplates(KubernetesResource resource)
    {
        if (resource.Secret is { } secret)
        {
            foreach (var (key, value) in secret.StringData.ToList())
            {
                secret.StringData[key] = SecretValueExpression().Replace(value, match =>
                    WrittenSecretValues.TryGetValue(match.Groups["parameter"].Value, out var path)
                        ? $"{{{{ required `set {path[".Values.".Length..]} (docs/deploy.md)` {path} }}}}"
                        : match.Value);
            }
        }

        foreach (var container in resource.Workload?.PodTemplate.Spec.Containers ?? [])
        {
            foreach (var probe in new[] { container.ReadinessProbe, container.LivenessProbe, container.StartupProbe })
            {
                if (probe?.HttpGet is { } httpGet)
                {
                    httpGet.Scheme = httpGet.Scheme.ToUpperInvariant();
                }
            }
        }
    }

    [GeneratedRegex(@"\{\{ \.Values\.secrets\.[A-Za-z0-9_]+\.(?<parameter>[A-Za-z0-9_]+) \}\}")]
    private static partial Regex SecretValueExpression();
}
