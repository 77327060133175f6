using HttpPerf.ServiceDefaults;
using Gateway;
using Gateway.Admin;
using Gateway.Live;

// `dotnet Service.dll --health-probe` checks the running service's /health and exits: the Compose health check.
HealthProbe.ExitIfAsked(args);

var builder = WebApplication.CreateBuilder(args);

builder.AddServiceDefaults();
builder.AddGatewayServices();

var app = builder.Build();

app.UseServiceDefaults();
app.UseDefaultFiles();
app.UseStaticFiles();
app.MapLiveApi();
app.MapAdminApi();
app.MapReverseProxy(proxy => proxy.UseProxyPipeline());

app.Run();
