using Microsoft.Extensions.Hosting.Internal;
using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.Options;
using Uploads.Api.Storage;

namespace HttpPerf.Tests.Infrastructure;

/// <summary>Uploads.Api's real store and rules on a temp folder, for the handler and readers run in process; removed with it.</summary>
public sealed class TempUploadStore : IDisposable
{
    private TempUploadStore(string folder, UploadOptions options)
    {
        Folder = folder;
        var wrapped = Options.Create(options);
        Store = new UploadStore(wrapped, new HostingEnvironment { ContentRootPath = folder }, new StorageQuota(wrapped, new InProcessQuotaLedger()), NullLogger<UploadStore>.Instance);
        Rules = new UploadRules(wrapped);
    }

    public string Folder { get; }

    public UploadStore Store { get; }

    public UploadRules Rules { get; }

    /// <summary>This replica's folder of uploads in progress: empty once every request has ended.</summary>
    public string Incoming(string instance) => Path.Combine(Folder, ".incoming", instance);

    /// <summary>A started store in a new temp folder; <paramref name="configure"/> sets the options beyond the folder.</summary>
    public static async Task<TempUploadStore> StartAsync(string prefix, Action<UploadOptions> configure)
    {
        var folder = Directory.CreateTempSubdirectory(prefix).FullName;
        var options = new UploadOptions { DataDirectory = folder };
        configure(options);
        var temp = new TempUploadStore(folder, options);
        await temp.Store.StartAsync(TestContext.Current.CancellationToken);
        return temp;
    }

    public void Dispose()
    {
        Store.Dispose();
        Directory.Delete(Folder, recursive: true);
    }
}
