using System.Diagnostics;
using System.Net;
using System.Text.Json;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.Tests.Infrastructure;
using LoadGen.LocalSystem;

namespace HttpPerf.Tests.Processes;

/// <summary>
/// A disk that fills under an upload: Uploads.Api's folder a 24 MiB tmpfs, its free-space floor off
/// (<c>Uploads__MinFreeDiskBytes=0</c>), and another writer filling it while an upload is being written. The
/// service's failure is answered as one, 507 in every rung (never the 400 that blames the client's body, nor a 502
/// through the Gateway), the partial file is gone with its quota, and the service goes on serving. Needs root to
/// mount the tmpfs; skipped, saying why, without it.
/// </summary>
[Trait(Kind.Name, Kind.Processes)]
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
        using var gateway = new HttpClient { BaseAddress = _system!.Gateway.BaseAddress, Timeout = TimeSpan.FromSeconds(60) };
        var before = _system.StoredUploads();
        var filler = Path.Combine(Uploads, "filler");

        // 3.5 MiB of a 16 MiB file, then the disk fills, then the rest. The service checks the free space once a MiB
        // written: the check at 3 MiB has passed, so the next half MiB meets the full disk in the write itself (the
        // naive rung, which buffers the form first, and the optimized one, whose 1 MiB blocks are written after the
        // next check, meet the check instead).
        var release = new TaskCompletionSource();
        var body = Multipart.Body([new Multipart.Part("big.bin", "application/octet-stream", EveryRung.RandomFile(16 * 1024 * 1024))]);
        var content = new GatedContent(body, 7 * 512 * 1024, release.Task);
        content.Headers.TryAddWithoutValidation("Content-Type", $"multipart/form-data; boundary={Multipart.Boundary}");
        using var request = new HttpRequestMessage(HttpMethod.Post, "/api/uploads") { Content = content };
        request.Headers.Add(Http.ModeHeader, mode);
        var answer = gateway.SendAsync(request, TestContext.Current.CancellationToken);
        try
        {
            // The streaming rungs write as it arrives: wait until they have (the naive rung buffers the form first).
            await Poll.UntilAsync(() => Task.FromResult(Used() >= 3 * 1024 * 1024), TimeSpan.FromSeconds(5), TimeSpan.FromMilliseconds(50));
            Fill(filler);
        }
        finally
        {
            release.TrySetResult();
        }

        using var response = await answer;
        var text = await response.Content.ReadAsStringAsync(TestContext.Current.CancellationToken);
        Assert.True(response.StatusCode is HttpStatusCode.InsufficientStorage, $"{mode}: {(int)response.StatusCode} {text}");
        Assert.Equal("application/problem+json", response.Content.Headers.ContentType?.MediaType);
        Assert.Contains("cannot be stored", JsonDocument.Parse(text).RootElement.GetProperty("title").GetString(), StringComparison.Ordinal);
        Assert.Equal(before, _system.StoredUploads());
        Assert.Empty(_system.IncomingFiles());

        // Room again: a smaller upload is stored (its quota was not held by the failed one) and downloads whole.
        File.Delete(filler);
        var small = EveryRung.RandomFile(1024 * 1024);
        var (receipt, _) = await EveryRung.UploadAsync(gateway, "/api/uploads", small, mode);
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

    /// <summary>A body sent up to <paramref name="first"/> bytes, then the rest once <paramref name="release"/> completes.</summary>
    private sealed class GatedContent(byte[] body, int first, Task release) : HttpContent
    {
        protected override async Task SerializeToStreamAsync(Stream stream, TransportContext? context)
        {
            await stream.WriteAsync(body.AsMemory(0, first));
            await stream.FlushAsync();
            await release;
            await stream.WriteAsync(body.AsMemory(first));
        }

        protected override bool TryComputeLength(out long length)
        {
            length = body.Length;
            return true;
        }
    }
}
