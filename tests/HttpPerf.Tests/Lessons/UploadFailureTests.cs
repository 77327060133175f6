using System.Text;
using HttpPerf.ServiceDefaults.Selection;
using HttpPerf.Tests.Infrastructure;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Http.HttpResults;
using Microsoft.Extensions.Hosting.Internal;
using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.Options;
using Uploads.Api;
using Uploads.Api.Reader;
using Uploads.Api.Storage;

namespace HttpPerf.Tests.Lessons;

/// <summary>
/// Whose fault a failed upload is: the client's only when its body was the cause (it ended before the closing
/// boundary: 400); any failure of the service's storage, wherever it surfaces, is 507 for no space and 500 otherwise,
/// in every rung, with nothing left in progress. In process: the real handler and readers on a temp folder.
/// </summary>
[Trait(Kind.Name, Kind.Lessons)]
public sealed class UploadFailureTests : IAsyncLifetime
{
    private const string Boundary = "----failure-test-boundary";
    private const string Instance = "failure-tests";

    private readonly string _folder = Directory.CreateTempSubdirectory("upload-failure-").FullName;
    private UploadStore _store = null!;
    private UploadRules _rules = null!;

    private static CancellationToken Cancel => TestContext.Current.CancellationToken;

    public static TheoryData<string> Rungs => ["naive", "streaming", "optimized"];

    public async ValueTask InitializeAsync()
    {
        var options = Options.Create(new UploadOptions { DataDirectory = _folder, InstanceId = Instance, MinFreeDiskBytes = 0 });
        _store = new UploadStore(options, new HostingEnvironment { ContentRootPath = _folder }, new StorageQuota(options, new InProcessQuotaLedger()), NullLogger<UploadStore>.Instance);
        await _store.StartAsync(Cancel);
        _rules = new UploadRules(options);
    }

    public ValueTask DisposeAsync()
    {
        _store.Dispose();
        Directory.Delete(_folder, recursive: true);
        return ValueTask.CompletedTask;
    }

    [Theory]
    [InlineData(28, 507)] // ENOSPC: the disk is full
    [InlineData(122, 507)] // EDQUOT: the file system's quota is spent
    [InlineData(5, 500)] // EIO
    [InlineData(20, 500)] // ENOTDIR
    public void A_storage_error_is_the_services_507_for_no_space_500_otherwise(int errno, int status)
    {
        Assert.Equal(status, UploadRules.StorageFailed(new IOException("storage", errno)).Status);
        Assert.Equal(status, UploadRules.ReadFailed(new IOException("storage", errno)).Status);
    }

    [Fact]
    public void A_body_that_ends_early_is_the_clients_400_and_a_lost_permission_the_services_500()
    {
        Assert.Equal(400, UploadRules.ReadFailed(new IOException("Unexpected end of Stream, the content may have already been read by another component.")).Status);
        Assert.Equal(500, UploadRules.StorageFailed(new UnauthorizedAccessException("denied")).Status);
    }

    [Theory]
    [MemberData(nameof(Rungs))]
    public async Task A_store_that_cannot_make_the_uploads_folder_answers_500_in_every_rung_not_the_clients_400(string rung)
    {
        // The replica's incoming folder replaced by a file: making the upload's own folder under it fails (ENOTDIR).
        var incoming = Path.Combine(_folder, ".incoming", Instance);
        Directory.Delete(incoming, recursive: true);
        await File.WriteAllTextAsync(incoming, "not a folder", Cancel);
        try
        {
            var (status, title) = await UploadAsync(rung);
            Assert.Equal(500, status);
            Assert.Equal("The upload could not be written to storage.", title);
        }
        finally
        {
            File.Delete(incoming);
            Directory.CreateDirectory(incoming);
        }

        Assert.Equal([".incoming"], Directory.GetDirectories(_folder).Select(Path.GetFileName));
        Assert.Empty(Directory.GetDirectories(incoming));
    }

    [Theory]
    [MemberData(nameof(Rungs))]
    public async Task A_body_cut_before_its_closing_boundary_is_the_clients_400_and_leaves_nothing(string rung)
    {
        var whole = Body();
        var (status, _) = await UploadAsync(rung, whole[..(whole.Length - 40)]);
        Assert.Equal(400, status);
        Assert.Empty(Directory.GetDirectories(Path.Combine(_folder, ".incoming", Instance)));
    }

    private async Task<(int Status, string Title)> UploadAsync(string rung, byte[]? body = null)
    {
        IUploadReader reader = rung switch
        {
            "naive" => new FormFileUploadReader(_rules, _store, new UploadMetrics(), new RequestVariants()),
            "streaming" => new StreamingUploadReader(_rules, _store),
            _ => new PipeUploadReader(_rules),
        };
        var context = new DefaultHttpContext();
        context.Request.Method = "POST";
        context.Request.ContentType = $"multipart/form-data; boundary={Boundary}";
        context.Request.Body = new MemoryStream(body ?? Body());
        var result = (await UploadsApi.Upload(context, reader, _store, _rules, new UploadMetrics(), new RequestVariants(), Cancel)).Result;
        return result is ProblemHttpResult problem ? (problem.StatusCode, problem.ProblemDetails.Title ?? "") : (201, "");
    }

    private static byte[] Body() => Encoding.UTF8.GetBytes(
        $"--{Boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.bin\"\r\nContent-Type: application/octet-stream\r\n\r\n{new string('x', 100_000)}\r\n--{Boundary}--\r\n");
}
