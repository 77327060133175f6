using StackExchange.Redis;
using HttpPerf.ServiceDefaults.Flags;
using Uploads.Api;
using Uploads.Api.Download;
using Uploads.Api.Reader;
using Uploads.Api.Storage;

namespace Microsoft.Extensions.Hosting;

public static class UploadServiceExtensions
{
    public static IHostApplicationBuilder AddUploadServices(this IHostApplicationBuilder builder)
    {
        builder.Services.Configure<UploadOptions>(builder.Configuration.GetSection(UploadOptions.Section));
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
