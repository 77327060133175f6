var builder = WebApplication.CreateBuilder(args);

builder.AddServiceDefaults();
builder.AddUploadServices();

var app = builder.Build();

app.UseServiceDefaults();
app.MapUploadsApi();

app.Run();
