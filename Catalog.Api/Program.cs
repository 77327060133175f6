var builder = WebApplication.CreateBuilder(args);

builder.AddServiceDefaults();
builder.AddCatalogServices();

var app = builder.Build();

app.UseServiceDefaults();
app.MapCatalogApi();

app.Run();
