var builder = DistributedApplication.CreateBuilder(args);

// One flags file for every service: edit it and each service switches within a second, no restart.
var flagsFile = Path.Combine(builder.AppHostDirectory, "flags.json");

// Key for the Gateway's /admin routes: generated once, kept in this AppHost's user secrets.
var adminKey = builder.AddParameter("admin-key", new GenerateParameterDefault { MinLength = 32, Special = false }, secret: true, persist: true);

var catalog = builder.AddProject<Projects.Catalog_Api>("catalog")
    .WithPerfFlags(flagsFile)
    .WithHttpHealthCheck("/health");

var uploads = builder.AddProject<Projects.Uploads_Api>("uploads")
    .WithPerfFlags(flagsFile)
    .WithHttpHealthCheck("/health");

var frontend = builder.AddProject<Projects.Frontend_Api>("frontend")
    .WithPerfFlags(flagsFile)
    .WithHttpHealthCheck("/health")
    .WithReference(catalog).WaitFor(catalog);

var gateway = builder.AddProject<Projects.Gateway>("gateway")
    .WithPerfFlags(flagsFile)
    .WithEnvironment("Admin__Key", adminKey)
    // The local demo lets LoadGen's A/B mode force naive or optimized per request; a deployment keeps it off.
    .WithEnvironment("Gateway__AllowModeOverride", "true")
    .WithHttpHealthCheck("/health")
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

// Drives traffic through the Gateway for ten minutes: a mix that reaches all six pitfalls (10 MiB uploads
// and downloads), served as the flags file says, so a flag flipped in the dashboard shows in every chart.
// Its buttons change the rate and switch to A/B (naive and optimized interleaved by header) and back, live.
// Start it from the dashboard when you are ready to watch.
builder.AddProject<Projects.LoadGen>("loadgen")
    .WithArgs("run", "--mode", "flags", "--scenario", "products=2,catalog=2,export=2,upload=1,download=1", "--size-mb", "10",
        "--rate", "1", "--duration", "00:10:00", "--concurrency", "16")
    .WithHttpEndpoint(name: "control", env: "LOADGEN_CONTROL_PORT")
    .WithRateCommands()
    .WithModeCommands()
    .WithReference(gateway).WaitFor(gateway)
    .WithExplicitStart();

builder.Build().Run();

internal static class PerfFlagsResourceExtensions
{
    /// <summary>Points a service at the shared flags file (configuration key <c>FeatureFlags:File</c>).</summary>
    public static IResourceBuilder<ProjectResource> WithPerfFlags(this IResourceBuilder<ProjectResource> service, string flagsFile) =>
        service.WithEnvironment("FeatureFlags__File", flagsFile);
}
