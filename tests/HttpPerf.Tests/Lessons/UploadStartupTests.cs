using HttpPerf.Tests.Infrastructure;
using Microsoft.Extensions.Hosting.Internal;
using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.Options;
using Uploads.Api.Storage;

namespace HttpPerf.Tests.Lessons;

/// <summary>
/// Replicas that share one uploads folder start together (container mode starts both at once, and every start of a
/// container is a new host name): each clears the uploads in progress of replicas that are gone, and two of them may
/// find the same leftovers. In process: the real store, several started at once on one temp folder.
/// </summary>
[Trait(Kind.Name, Kind.Lessons)]
public sealed class UploadStartupTests
{
    private const int Replicas = 4;
    private const int Gone = 30;
    private const string Restarted = "restarted";

    [Fact]
    public async Task Replicas_starting_at_once_clear_the_leftovers_of_gone_ones_and_none_fails()
    {
        var folder = Directory.CreateTempSubdirectory("upload-startup-").FullName;
        try
        {
            // Several rounds: each round's replicas are the next round's gone ones, as a restart of container mode is.
            for (var round = 0; round < 8; round++)
            {
                var incoming = Path.Combine(folder, ".incoming");
                for (var i = 0; i < Gone; i++)
                {
                    var pending = Directory.CreateDirectory(Path.Combine(incoming, $"gone-{round}-{i}", $"upload-{i}")).FullName;
                    await File.WriteAllTextAsync(Path.Combine(pending, "data"), "never acknowledged", TestContext.Current.CancellationToken);
                    await File.WriteAllTextAsync(Path.Combine(incoming, $"gone-{round}-{i}", ".lock"), "", TestContext.Current.CancellationToken);
                }

                // One replica comes back under the name it had (a process restarted in place keeps its instance id): its
                // last run's folder is a leftover nobody holds, which the others may take for a gone replica's while it
                // claims it back.
                var names = Enumerable.Range(0, Replicas).Select(i => i == 0 ? Restarted : $"live-{round}-{i}").ToArray();
                var stores = names.Select(name => Store(folder, name)).ToArray();
                try
                {
                    using var start = new Barrier(Replicas);
                    await Task.WhenAll(stores.Select(store => Task.Run(async () =>
                    {
                        start.SignalAndWait(TestContext.Current.CancellationToken);
                        await store.StartAsync(TestContext.Current.CancellationToken);
                    }, TestContext.Current.CancellationToken)));

                    // Only the live replicas' own folders are left, each with nothing in progress.
                    Assert.Equal(names.Order(), Directory.GetDirectories(incoming).Select(Path.GetFileName).Order());
                    Assert.All(Directory.GetDirectories(incoming), live => Assert.Empty(Directory.GetDirectories(live)));
                }
                finally
                {
                    foreach (var store in stores)
                    {
                        store.Dispose();
                    }
                }
            }
        }
        finally
        {
            Directory.Delete(folder, recursive: true);
        }
    }

    private static UploadStore Store(string folder, string instance)
    {
        var options = Options.Create(new UploadOptions { DataDirectory = folder, InstanceId = instance, MinFreeDiskBytes = 0 });
        return new UploadStore(options, new HostingEnvironment { ContentRootPath = folder }, new StorageQuota(options, new InProcessQuotaLedger()), NullLogger<UploadStore>.Instance);
    }
}
