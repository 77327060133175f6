var builder = WebApplication.CreateBuilder(args);

builder.AddServiceDefaults();
builder.AddGatewayServices();

var app = builder.Build();

app.UseServiceDefaults();
app.MapReverseProxy();

app.Run();
