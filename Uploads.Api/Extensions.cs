using Uploads.Api.Storage;

namespace Microsoft.Extensions.Hosting;

public static class UploadServiceExtensions
{
    public static IHostApplicationBuilder AddUploadServices(this IHostApplicationBuilder builder)
    {
        builder.Services.Configure<UploadOptions>(builder.Configuration.GetSection(UploadOptions.Section));
        builder.Services.AddSingleton<UploadStore>();
        builder.Services.AddHostedService(sp => sp.GetRequiredService<UploadStore>());
        return builder;
    }
}
