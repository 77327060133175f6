var builder = DistributedApplication.CreateBuilder(args);

// Run (`dotnet run --project AppHost`): processes on this machine, one flags file, no Docker.
// Published (`aspire publish`): a Docker Compose deployment, docker-compose.yaml and .env, or with
// `--Deployment:Target kubernetes` a Helm chart. Everything only publishing does is in PublishModeExtensions.cs;
// docs/deploy.md says how to run the output.
var deployment = builder.AddDeploymentTarget();

// Flags: run here, one flags file for every service (edit it and each service switches within a second, no
// restart); published, Redis, which every replica reads and the admin API writes.
var flagsFile = Path.Combine(builder.AppHostDirectory, "flags.json");
var flagsStore = builder.ExecutionContext.IsPublishMode
    ? builder.AddRedis("flags").WithDataVolume("flags-data").PublishAsFlagsStore(deployment)
    : null;

// Key for the Gateway's /admin routes: run here, generated once and kept in this AppHost's user secrets;
// published, the required .env entry ADMIN_KEY.
var adminKey = builder.AddParameter("admin-key", new GenerateParameterDefault { MinLength = 32, Special = false }, secret: true, persist: true);

var catalog = builder.AddProject<Projects.Catalog_Api>("catalog")
    .WithPerfFlags(flagsFile, flagsStore)
    .WithHttpHealthCheck("/health")
    // Each replica seeds its own SQLite copy; in a container, /tmp is the place the "app" user surely may write.
    .PublishWithEnvironment("Catalog__DataDirectory", "/tmp/catalog")
    .PublishAsService(deployment, replicas: deployment.Replicas);

var uploads = builder.AddProject<Projects.Uploads_Api>("uploads")
    .WithPerfFlags(flagsFile, flagsStore)
    .WithHttpHealthCheck("/health")
    .PublishAsService(deployment, replicas: deployment.Replicas)
    .PublishWithUploadsVolume(deployment);

var frontend = builder.AddProject<Projects.Frontend_Api>("frontend")
    .WithPerfFlags(flagsFile, flagsStore)
    .WithHttpHealthCheck("/health")
    .WithReference(catalog).WaitFor(catalog)
    .PublishAsService(deployment, replicas: deployment.Replicas);

var gateway = builder.AddProject<Projects.Gateway>("gateway")
    .WithPerfFlags(flagsFile, flagsStore)
    .WithEnvironment("Admin__Key", adminKey)
    // The local demo lets LoadGen's A/B mode force naive or optimized per request; a deployment keeps it off.
    .WithEnvironment("Gateway__AllowModeOverride", builder.ExecutionContext.IsRunMode ? "true" : "false")
    .WithHttpHealthCheck("/health")
    .WithExternalHttpEndpoints()
    // The Gateway's own pages: the landing page (flags, and the last minute per route and variant) and the admin page.
    .WithUrlForEndpoint("http", url => url.DisplayText = "Landing page: live by variant")
    .WithUrlForEndpoint("http", _ => new() { Url = "/admin/", DisplayText = "Admin page: switch flags" })
    .WithReference(catalog)
    .WithReference(frontend)
    .WithReference(uploads)
    .WaitFor(frontend).WaitFor(uploads)
    .PublishAsService(deployment, hostPort: PublishModeExtensions.GatewayHostPort);

// Dashboard buttons on each resource: switch its pitfall flags, or all of them from the Gateway.
catalog.WithFlagCommands(gateway, adminKey);
frontend.WithFlagCommands(gateway, adminKey);
uploads.WithFlagCommands(gateway, adminKey);
gateway.WithFlagCommands(gateway, adminKey).WithAllFlagsCommands(adminKey);

// Drives traffic through the Gateway for ten minutes: a mix that reaches all six pitfalls (10 MiB uploads
// and downloads), served as the flags say, so a flag flipped in the dashboard shows in every chart.
// Its buttons change the rate and switch to A/B (naive and optimized interleaved by header) and back, live.
// Run here, start it from the dashboard when you are ready to watch; published, it is in the Compose
// profile "load" (`docker-compose --profile load up`).
builder.AddProject<Projects.LoadGen>("loadgen")
    .WithArgs("run", "--mode", "flags", "--scenario", "products=2,catalog=2,export=2,upload=1,download=1", "--size-mb", "10",
        "--rate", "1", "--duration", "00:10:00", "--concurrency", "16")
    .WithHttpEndpoint(name: "control", env: "LOADGEN_CONTROL_PORT")
    .WithRateCommands()
    .WithModeCommands()
    .WithReference(gateway).WaitFor(gateway)
    .WithExplicitStart()
    .PublishAsLoadProfile(deployment, profile: "load");

builder.Build().Run();

internal static class PerfFlagsResourceExtensions
{
    /// <summary>
    /// Where a service reads its pitfall flags: run here, the shared flags file (configuration key
    /// <c>FeatureFlags:File</c>); published, the Redis resource (<c>ConnectionStrings:flags</c>), once it answers.
    /// </summary>
    public static IResourceBuilder<ProjectResource> WithPerfFlags(
        this IResourceBuilder<ProjectResource> service, string flagsFile, IResourceBuilder<RedisResource>? flagsStore) =>
        flagsStore is null
            ? service.WithEnvironment("FeatureFlags__File", flagsFile)
            : service.WithReference(flagsStore).WaitFor(flagsStore);
}
