using HttpPerf.AppHost.Containers;
using HttpPerf.AppHost.Swarm;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.ServiceDefaults;
using Microsoft.Extensions.DependencyInjection;

var builder = DistributedApplication.CreateBuilder(ContainerSettings.AsConfiguration(args));

// Run (`dotnet run -c Release --project AppHost`): processes on this machine, one flags file, no container engine.
// Run with `-- --containers`: every service from its image (built by the .NET SDK when missing or stale), Catalog,
// Frontend and Uploads as replicas each in a container of its own, Redis for the flags, on Docker or Podman
// (Containers/ContainerMode.cs). Published (`aspire publish`, docs/deploy.md): Redis for the flags and replicas of
// every service, as a manifest or as a swarm stack; Publishing.cs holds everything only publishing does.
var containers = builder.AddContainerMode();
var replicas = builder.AddReplicas();

// Flags: in process mode, one flags file for every service (edit it and each service switches within a second, no
// restart); in container mode and published, Redis, which every replica reads and the admin API writes. Redis saves a
// flip within a second (Aspire's default is 60 s: a Redis restarted within a minute of a flip came back with the flags
// from before it, and every replica took them).
var flagsFile = builder.Configuration[SystemContract.ConfigurationKey(SystemContract.FlagsFile)] ?? Path.Combine(builder.AppHostDirectory, "flags.json");
var flagsStore = builder.ExecutionContext.IsPublishMode || containers.Enabled
    ? builder.AddRedis(SystemContract.FlagsConnectionName).WithDataVolume("flags-data").WithPersistence(TimeSpan.FromSeconds(1)).InContainerMode(containers)
    : null;

// Key for the Gateway's /admin routes: run here, generated once and kept in this AppHost's user secrets;
// published, a secret parameter the deployment must be given.
var adminKey = builder.AddParameter(SystemContract.AdminKeyParameter,
    new GenerateParameterDefault { MinLength = 32, Special = false }, secret: true, persist: true);

// Two Catalog replicas in process mode too, each at its own address: Frontend.Replicas is the lesson of one that hangs.
var catalog = builder.AddService<Projects.Catalog_Api>(SystemContract.Catalog, containers, containers.Replicas, processReplicas: 2)
    .WithPerfFlags(flagsFile, flagsStore)
    .WithHttpHealthCheck(SystemContract.HealthPath)
    .WithHttp2Listener()
    .WithDirectEndpoint()
    // Each replica seeds its own SQLite copy; in a container, /tmp is the place the "app" user surely may write.
    .WithEnvironmentInContainers(SystemContract.CatalogDataDirectory, "/tmp/catalog")
    .PublishWithReplicas(replicas);

var uploads = builder.AddService<Projects.Uploads_Api>(SystemContract.Uploads, containers, containers.Replicas)
    .WithPerfFlags(flagsFile, flagsStore)
    .WithHttpHealthCheck(SystemContract.HealthPath)
    .WithHttp2Listener()
    .WithDirectEndpoint()
    // One volume shared by every replica, so any replica serves any upload.
    .WithUploadsVolume(containers.UploadsVolume)
    .PublishWithReplicas(replicas);

var frontend = builder.AddService<Projects.Frontend_Api>(SystemContract.Frontend, containers, containers.Replicas)
    .WithPerfFlags(flagsFile, flagsStore)
    .WithHttpHealthCheck(SystemContract.HealthPath)
    .WithHttp2Listener()
    .WithDirectEndpoint()
    .WithReference(catalog).WaitFor(catalog)
    .PublishWithReplicas(replicas);

var gateway = builder.AddService<Projects.Gateway>(SystemContract.Gateway, containers)
    .WithPerfFlags(flagsFile, flagsStore)
    .WithEnvironment(SystemContract.AdminKey, adminKey)
    // The local demo lets LoadGen's A/B mode force naive or optimized per request; a deployment keeps it off.
    .WithEnvironment(SystemContract.AllowModeOverride, builder.ExecutionContext.IsRunMode ? "true" : "false")
    // A relay's work per arriving piece is a copy: run it on the socket's own thread (Gateway/Relay/InlineRelay.cs).
    .WithEnvironment(SystemContract.InlineSocketCompletions, "1")
    // Published, a Gateway on every node probes every replica: every 30 s, not 5 (Gateway/Edge/ProbeInterval.cs).
    .PublishWithEnvironment(SystemContract.ProbeInterval, "00:00:30")
    .WithHttpHealthCheck(SystemContract.HealthPath)
    // http://localhost:5100, its launch profile's address, which the README names (in container mode too).
    .WithDirectEndpoint(port: 5100)
    .WithPublicPages()
    .WithReference(catalog)
    .WithReference(frontend)
    .WithReference(uploads)
    .WaitFor(frontend).WaitFor(uploads);

// Dashboard buttons on each resource (each replica): switch its pitfall flags, or all of them from the Gateway.
catalog.WithFlagCommands(gateway, adminKey);
// And on each Catalog replica: freeze it, or starve it, for 60 s (the lesson of Frontend.Replicas).
catalog.WithFaultCommands(containers);
frontend.WithFlagCommands(gateway, adminKey);
uploads.WithFlagCommands(gateway, adminKey);
gateway.WithFlagCommands(gateway, adminKey).WithAllFlagsCommands(adminKey);

// Drives traffic through the Gateway until it is stopped: a mix that reaches every pitfall (10 MiB uploads
// and downloads), served as the flags say, so a flag flipped in the dashboard shows in every chart.
// Its buttons change the rate, switch to A/B (naive and optimized interleaved by header) and back, live, and
// measure naive against optimized now; its rate, mode, requests and errors are properties of the resource.
// Start it from the dashboard when you are ready to watch; published, it is not started either (Publishing.cs).
builder.AddService<Projects.LoadGen>(SystemContract.LoadGen, containers)
    .WithArgs("run", "--mode", "flags", "--scenario", "products=2,product=2,catalog=2,export=2,upload=1,download=1", "--size-mb", "10",
        "--rate", "1", "--duration", "infinite", "--concurrency", "16")
    .WithControlEndpoint()
    // Presented with every request: its A/B forces modes through a published Gateway too, which drops an anonymous one.
    .WithEnvironment(SystemContract.LoadGenAdminKey, adminKey)
    .WithLoadGenCommands()
    .WithReference(gateway).WaitFor(gateway)
    .WithExplicitStart()
    .PublishAsExplicitStart();

builder.Services.AddHostedService<LoadGenStatus>();

// Published (`aspire publish -o deploy/swarm`): the same system as a Docker swarm stack (AppHost/Swarm, docs/deploy.md).
builder.AddSwarmStack(containers);

builder.Build().Run();
