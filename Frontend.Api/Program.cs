var builder = WebApplication.CreateBuilder(args);

builder.AddServiceDefaults();
builder.AddFrontendServices();

var app = builder.Build();

app.UseServiceDefaults();
app.MapFrontendApi();

app.Run();
