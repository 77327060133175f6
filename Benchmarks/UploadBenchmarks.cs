using System.Net.Http.Json;
using System.Security.Cryptography;
using BenchmarkDotNet.Attributes;
using Benchmarks.Hosting;
using Microsoft.AspNetCore.Builder;
using Microsoft.Extensions.Hosting;

namespace Benchmarks;

/// <summary>
/// Seed 002: the Uploads service's own readers (flag Uploads.Reader) on its real wiring, on Kestrel in
/// this process: IFormFile (the form buffered, then copied) vs MultipartReader streaming to storage.
/// Published: 30 MB/s vs 350 MB/s.
/// </summary>
[MemoryDiagnoser]
public class UploadBenchmarks
{
    private readonly string _data = Directory.CreateTempSubdirectory("bench-uploads-").FullName;
    private KestrelHost _uploads = null!;
    private HttpClient _client = null!;
    private byte[] _file = [];

    [Params(20, 100)]
    public int SizeMb { get; set; }

    [GlobalSetup]
    public async Task SetupAsync()
    {
        _file = RandomNumberGenerator.GetBytes(SizeMb * 1024 * 1024);
        _uploads = await UploadsHost.StartAsync(_data);
        _client = new HttpClient { BaseAddress = _uploads.BaseAddress, Timeout = TimeSpan.FromMinutes(5) };
    }

    [IterationCleanup]
    public void DeleteStoredFiles()
    {
        foreach (var file in Directory.GetFiles(_data))
        {
            File.Delete(file);
        }
    }

    [GlobalCleanup]
    public async Task CleanupAsync()
    {
        _client.Dispose();
        await _uploads.DisposeAsync();
        Directory.Delete(_data, recursive: true);
    }

    [Benchmark(Baseline = true)]
    public Task<long> IFormFile() => UploadAsync("naive");

    [Benchmark]
    public Task<long> MultipartReader() => UploadAsync("optimized");

    private async Task<long> UploadAsync(string mode)
    {
        using var form = new MultipartFormDataContent { { new ByteArrayContent(_file), "file", "bench.bin" } };
        using var request = new HttpRequestMessage(HttpMethod.Post, "/uploads") { Content = form };
        request.Headers.Add("X-Perf-Mode", mode);
        using var response = await _client.SendAsync(request);
        response.EnsureSuccessStatusCode();
        return (await response.Content.ReadFromJsonAsync<List<Receipt>>())![0].Size;
    }

    private sealed record Receipt(string Id, long Size);
}

/// <summary>
/// Seed 002's download lesson: the same file streamed by the Uploads service's file result, read by the
/// client with a 4, 16, 64 or 128 KB buffer. Published: 140 MB/s -> 200 MB/s with 64 KB.
/// </summary>
[MemoryDiagnoser]
public class DownloadBufferBenchmarks
{
    private readonly string _data = Directory.CreateTempSubdirectory("bench-downloads-").FullName;
    private KestrelHost _uploads = null!;
    private HttpClient _client = null!;
    private string _id = "";

    [Params(20)]
    public int SizeMb { get; set; }

    [GlobalSetup]
    public async Task SetupAsync()
    {
        _uploads = await UploadsHost.StartAsync(_data);
        _client = new HttpClient { BaseAddress = _uploads.BaseAddress };
        using var form = new MultipartFormDataContent { { new ByteArrayContent(RandomNumberGenerator.GetBytes(SizeMb * 1024 * 1024)), "file", "bench.bin" } };
        using var response = await _client.PostAsync("/uploads", form);
        response.EnsureSuccessStatusCode();
        _id = (await response.Content.ReadFromJsonAsync<List<Receipt>>())![0].Id;
    }

    [GlobalCleanup]
    public async Task CleanupAsync()
    {
        _client.Dispose();
        await _uploads.DisposeAsync();
        Directory.Delete(_data, recursive: true);
    }

    [Benchmark(Baseline = true)]
    public Task<long> Buffer4K() => DownloadAsync(4 * 1024);

    [Benchmark]
    public Task<long> Buffer16K() => DownloadAsync(16 * 1024);

    [Benchmark]
    public Task<long> Buffer64K() => DownloadAsync(64 * 1024);

    [Benchmark]
    public Task<long> Buffer128K() => DownloadAsync(128 * 1024);

    private async Task<long> DownloadAsync(int bufferSize)
    {
        using var response = await _client.GetAsync($"/uploads/{_id}", HttpCompletionOption.ResponseHeadersRead);
        response.EnsureSuccessStatusCode();
        await using var body = await response.Content.ReadAsStreamAsync();
        var buffer = new byte[bufferSize];
        long total = 0;
        int read;
        while ((read = await body.ReadAsync(buffer)) > 0)
        {
            total += read;
        }

        return total;
    }

    private sealed record Receipt(string Id, long Size);
}

/// <summary>Uploads.Api's real wiring on Kestrel in this process, storing under <c>dataDirectory</c>.</summary>
internal static class UploadsHost
{
    public static Task<KestrelHost> StartAsync(string dataDirectory) => KestrelHost.StartAsync(
        new Dictionary<string, string?> { ["Uploads:DataDirectory"] = dataDirectory },
        builder =>
        {
            builder.AddServiceDefaults();
            builder.AddUploadServices();
        },
        app =>
        {
            app.UseServiceDefaults();
            app.MapUploadsApi();
        });
}
