using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.ServiceDefaults.Selection;
using StackExchange.Redis;
using Uploads.Api.Download;
using Uploads.Api.Reader;
using Uploads.Api.Storage;

namespace Uploads.Api;

public static class UploadServiceExtensions
{
    public static IHostApplicationBuilder AddUploadServices(this IHostApplicationBuilder builder)
    {
        builder.Services.AddOptions<UploadOptions>().BindConfiguration(UploadOptions.Section)
            .Validate(o => !string.IsNullOrWhiteSpace(o.DataDirectory), "Uploads:DataDirectory must name a directory for the files.")
            .Validate(o => o.MaxFileBytes > 0 && o.MaxRequestBytes >= o.MaxFileBytes, "Uploads:MaxFileBytes must be positive and Uploads:MaxRequestBytes at least as large: a file that may not fit in a request could never be stored.")
            .Validate(o => o.MaxFilesPerRequest > 0, "Uploads:MaxFilesPerRequest must be positive.")
            .Validate(o => o.MaxStoredBytes > 0 && o.MinFreeDiskBytes >= 0, "Uploads:MaxStoredBytes must be positive and Uploads:MinFreeDiskBytes not negative.")
            .Validate(o => o.AllowedContentTypes.Length > 0, "Uploads:AllowedContentTypes must list at least one type (*/* allows any).")
            .ValidateOnStart();
        builder.Services.AddSingleton<StorageQuota>();
        // Replicas sharing one storage directory share one quota through Redis, when the service has it.
        builder.Services.AddSingleton<IQuotaLedger>(sp => sp.GetService<IConnectionMultiplexer>() is { } redis
            ? ActivatorUtilities.CreateInstance<RedisQuotaLedger>(sp, redis)
            : new InProcessQuotaLedger());
        builder.Services.AddSingleton<UploadStore>();
        builder.Services.AddHostedService(sp => sp.GetRequiredService<UploadStore>());
        builder.Services.AddSingleton<UploadRules>();
        builder.Services.AddSingleton<UploadMetrics>();

        builder.Services.AddPitfall<IUploadReader>(IUploadReader.Flag)
            .Variant<FormFileUploadReader>(PerfMode.Naive)
            .Variant<StreamingUploadReader>(PerfMode.Streaming)
            .Variant<PipeUploadReader>(PerfMode.Optimized);
        builder.Services.AddPitfall<IDownloadWriter, ByteArrayDownloadWriter, PhysicalFileDownloadWriter>(IDownloadWriter.Flag);
        return builder;
    }
}
