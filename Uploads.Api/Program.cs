using HttpPerf.ServiceDefaults;
using Uploads.Api;

// `dotnet Service.dll --health-probe` checks the running service's /health and exits: the Compose health check.
HealthProbe.ExitIfAsked(args);

var builder = WebApplication.CreateBuilder(args);

builder.AddServiceDefaults();
builder.AddUploadServices();

var app = builder.Build();

app.UseServiceDefaults();
app.MapUploadsApi();

app.Run();
