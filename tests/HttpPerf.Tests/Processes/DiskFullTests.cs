using System.Diagnostics;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.Tests.Infrastructure;
using Bench.LocalSystem;

namespace HttpPerf.Tests.Processes;

/// <summary>
/// A disk that fills under an upload: Uploads.Api's folder a 24 MiB tmpfs, its free-space floor off
/// (<c>Uploads__MinFreeDiskBytes=0</c>), and another writer filling it while an upload is being written. The
/// service's failure is answered as one, 507 in every rung of Uploads.Reader (never the 400 that blames the client's
/// body, nor a 502 through the Gateway), to a client that sends at 2 MiB/s and reads while it sends (curl); the partial
/// file is gone with its quota, and the service goes on serving. Needs root to mount the tmpfs; skipped, saying why,
/// without it.
/// </summary>
[Collection(Lanes.Processes)]
[Trait(Kind.Name, Kind.Processes)]
[Lesson(Pitfalls.UploadsReader)]
public sealed class DiskFullTests : IAsyncLifetime
{
    private const int DiskBytes = 24 * 1024 * 1024;
    private readonly string _work = Directory.CreateTempSubdirectory("httpperf-diskfull-").FullName;
    private LocalSystem? _system;
    private string? _unavailable;

    private string Uploads => Path.Combine(_work, "uploads");

    public static TheoryData<string> Modes => [.. PerfMode.All];

    public async ValueTask InitializeAsync()
    {
        Directory.CreateDirectory(Uploads);
        if (Environment.UserName != "root" || !Run("mount", "-t", "tmpfs", "-o", $"size={DiskBytes}", "tmpfs", Uploads))
        {
            _unavailable = "Mounting a tmpfs for the uploads folder needs root (mount -t tmpfs).";
            return;
        }

        _system = await LocalSystem.StartAsync(new LocalSystemOptions
        {
            ProductCount = 100,
            WorkDirectory = _work,
            Environment = new Dictionary<string, string> { ["Uploads__MinFreeDiskBytes"] = "0" },
        }, TestContext.Current.CancellationToken);
    }

    [Theory]
    [MemberData(nameof(Modes))]
    public async Task A_disk_filled_under_an_upload_answers_507_leaves_no_partial_file_and_the_service_goes_on(string mode)
    {
        Assert.SkipWhen(_unavailable is not null, _unavailable ?? "");
        await ServedFlags.SetAsync(_system!, new Dictionary<string, string> { [Pitfalls.UploadsReader] = mode });
        using var gateway = new HttpClient { BaseAddress = _system!.Gateway.BaseAddress, Timeout = TimeSpan.FromSeconds(60) };
        var before = _system.StoredUploads();
        var filler = Path.Combine(Uploads, "filler");

        // A 16 MiB file sent as curl sends it, at 2 MiB/s through the Gateway; 2 s in, another writer takes every byte
        // left. The streaming rungs have written about 4 MiB by then and meet the full disk in a write or in the
        // free-space check of the next MiB; the naive rung, which buffers the form first, meets it when it stores.
        var file = Path.Combine(_work, "big.bin");
        await File.WriteAllBytesAsync(file, EveryRung.RandomFile(16 * 1024 * 1024), TestContext.Current.CancellationToken);
        var answer = CurlUpload.PostAsync(new Uri(_system.Gateway.BaseAddress, "/api/uploads"), [new CurlUpload.Part(file, "application/octet-stream")],
            2 * 1024 * 1024, TestContext.Current.CancellationToken);
        await Task.Delay(TimeSpan.FromSeconds(2), TestContext.Current.CancellationToken);
        Fill(filler);

        var response = await answer;
        Assert.True(response.Status == 507, $"{mode}: {response.Status} {response.ProblemTitle} after {response.Elapsed.TotalSeconds:F1} s");
        Assert.Equal("application/problem+json", response.ContentType);
        Assert.Contains("cannot be stored", response.ProblemTitle, StringComparison.Ordinal);
        Assert.Equal(before, _system.StoredUploads());
        Assert.Empty(_system.IncomingFiles());

        // Room again: a smaller upload is stored (its quota was not held by the failed one) and downloads whole.
        File.Delete(filler);
        var small = EveryRung.RandomFile(1024 * 1024);
        var (receipt, _) = await EveryRung.UploadAsync(gateway, "/api/uploads", small, mode: null);
        var download = await Http.GetAsync(gateway, $"/api/uploads/{receipt.Id}");
        Assert.Equal(200, download.Status);
        Assert.Equal(small, download.Body);
    }

    public async ValueTask DisposeAsync()
    {
        if (_system is not null)
        {
            await _system.DisposeAsync();
        }

        Run("umount", Uploads);
        Directory.Delete(_work, recursive: true);
    }

    private long Used()
    {
        var drive = new DriveInfo(Uploads);
        return drive.TotalSize - drive.AvailableFreeSpace;
    }

    // Another writer takes every byte left.
    private static void Fill(string path)
    {
        var block = new byte[256 * 1024];
        using var file = new FileStream(path, FileMode.Create, FileAccess.Write, FileShare.None, bufferSize: 0);
        try
        {
            while (true)
            {
                file.Write(block);
            }
        }
        catch (IOException)
        {
            // Full.
        }
    }

    private static bool Run(string program, params string[] arguments)
    {
        try
        {
            using var process = Process.Start(new ProcessStartInfo(program, arguments) { RedirectStandardError = true, RedirectStandardOutput = true })!;
            process.WaitForExit(TimeSpan.FromSeconds(10));
            return process.ExitCode == 0;
        }
        catch (System.ComponentModel.Win32Exception)
        {
            return false;
        }
    }
}
