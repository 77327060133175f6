using HttpPerf.ServiceDefaults;
using Microsoft.Extensions.DependencyInjection;

var builder = DistributedApplication.CreateBuilder(args);

// Run (`dotnet run -c Release --project AppHost`): processes on this machine, one flags file, no Docker.
// Published (`aspire publish`, docs/deploy.md): Redis for the flags and replicas of every service; Publishing.cs
// holds everything only publishing does.
var replicas = builder.AddReplicas();

// Flags: run here, one flags file for every service (edit it and each service switches within a second, no
// restart); published, Redis, which every replica reads and the admin API writes.
var flagsFile = builder.Configuration["FeatureFlags:File"] ?? Path.Combine(builder.AppHostDirectory, "flags.json");
var flagsStore = builder.ExecutionContext.IsPublishMode
    ? builder.AddRedis(SystemContract.FlagsConnectionName).WithDataVolume("flags-data")
    : null;

// Key for the Gateway's /admin routes: run here, generated once and kept in this AppHost's user secrets;
// published, a secret parameter the deployment must be given.
var adminKey = builder.AddParameter(SystemContract.AdminKeyParameter,
    new GenerateParameterDefault { MinLength = 32, Special = false }, secret: true, persist: true);

var catalog = builder.AddProject<Projects.Catalog_Api>(SystemContract.Catalog)
    .WithPerfFlags(flagsFile, flagsStore)
    .WithHttpHealthCheck(SystemContract.HealthPath)
    .WithDirectEndpoint()
    // Each replica seeds its own SQLite copy; in a container, /tmp is the place the "app" user surely may write.
    .PublishWithEnvironment(SystemContract.CatalogDataDirectory, "/tmp/catalog")
    .PublishWithReplicas(replicas);

var uploads = builder.AddProject<Projects.Uploads_Api>(SystemContract.Uploads)
    .WithPerfFlags(flagsFile, flagsStore)
    .WithHttpHealthCheck(SystemContract.HealthPath)
    .WithDirectEndpoint()
    .PublishWithUploadsVolume()
    .PublishWithReplicas(replicas);

var frontend = builder.AddProject<Projects.Frontend_Api>(SystemContract.Frontend)
    .WithPerfFlags(flagsFile, flagsStore)
    .WithHttpHealthCheck(SystemContract.HealthPath)
    .WithDirectEndpoint()
    .WithReference(catalog).WaitFor(catalog)
    .PublishWithReplicas(replicas);

var gateway = builder.AddProject<Projects.Gateway>(SystemContract.Gateway)
    .WithPerfFlags(flagsFile, flagsStore)
    .WithEnvironment(SystemContract.AdminKey, adminKey)
    // The local demo lets LoadGen's A/B mode force naive or optimized per request; a deployment keeps it off.
    .WithEnvironment(SystemContract.AllowModeOverride, builder.ExecutionContext.IsRunMode ? "true" : "false")
    .WithHttpHealthCheck(SystemContract.HealthPath)
    // http://localhost:5100, its launch profile's address, which the README names.
    .WithDirectEndpoint()
    .WithExternalHttpEndpoints()
    // The Gateway's own pages: the landing page (flags, and the last minute per route and variant) and the admin page.
    .WithUrlForEndpoint("http", url => url.DisplayText = "Landing page: live by variant")
    .WithUrlForEndpoint("http", _ => new() { Url = "/admin/", DisplayText = "Admin page: switch flags" })
    .WithReference(catalog)
    .WithReference(frontend)
    .WithReference(uploads)
    .WaitFor(frontend).WaitFor(uploads);

// Dashboard buttons on each resource: switch its pitfall flags, or all of them from the Gateway.
catalog.WithFlagCommands(gateway, adminKey);
frontend.WithFlagCommands(gateway, adminKey);
uploads.WithFlagCommands(gateway, adminKey);
gateway.WithFlagCommands(gateway, adminKey).WithAllFlagsCommands(adminKey);

// Drives traffic through the Gateway until it is stopped: a mix that reaches all six pitfalls (10 MiB uploads
// and downloads), served as the flags say, so a flag flipped in the dashboard shows in every chart.
// Its buttons change the rate, switch to A/B (naive and optimized interleaved by header) and back, live, and
// measure naive against optimized now; its rate, mode, requests and errors are properties of the resource.
// Start it from the dashboard when you are ready to watch; published, it is not started either (Publishing.cs).
builder.AddProject<Projects.LoadGen>(SystemContract.LoadGen)
    .WithArgs("run", "--mode", "flags", "--scenario", "products=2,catalog=2,export=2,upload=1,download=1", "--size-mb", "10",
        "--rate", "1", "--duration", "infinite", "--concurrency", "16")
    .WithHttpEndpoint(name: "control", env: SystemContract.LoadGenControlPort, isProxied: false)
    .WithRateCommands()
    .WithModeCommands()
    .WithMeasureCommand()
    .WithReference(gateway).WaitFor(gateway)
    .WithExplicitStart()
    .PublishAsExplicitStart();

builder.Services.AddHostedService<LoadGenStatus>();

// Published with `-p:ContainerPublishers=true`: a Docker Compose file, or a Helm chart (docs/deploy.md).
builder.WithContainerPublishers();

builder.Build().Run();
