using System.Text;
using HttpPerf.ServiceDefaults.Selection;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.Tests.Infrastructure;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Http.HttpResults;
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
[Lesson(Pitfalls.UploadsReader)]
public sealed class UploadFailureTests : IAsyncLifetime
{
    private const string Boundary = "----failure-test-boundary";
    private const string Instance = "failure-tests";

    private TempUploadStore _temp = null!;

    public static TheoryData<string> Rungs => ["naive", "streaming", "optimized"];

    public async ValueTask InitializeAsync() =>
        _temp = await TempUploadStore.StartAsync("upload-failure-", o => (o.InstanceId, o.MinFreeDiskBytes) = (Instance, 0));

    public ValueTask DisposeAsync()
    {
        _temp.Dispose();
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
        var incoming = _temp.Incoming(Instance);
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

        Assert.Equal([".incoming"], Directory.GetDirectories(_temp.Folder).Select(Path.GetFileName));
        Assert.Empty(Directory.GetDirectories(incoming));
    }

    [Theory]
    [MemberData(nameof(Rungs))]
    public async Task A_body_cut_before_its_closing_boundary_is_the_clients_400_and_leaves_nothing(string rung)
    {
        var whole = Body();
        var (status, _) = await UploadAsync(rung, whole[..(whole.Length - 40)]);
        Assert.Equal(400, status);
        Assert.Empty(Directory.GetDirectories(_temp.Incoming(Instance)));
    }

    private async Task<(int Status, string Title)> UploadAsync(string rung, byte[]? body = null)
    {
        IUploadReader reader = rung switch
        {
            "naive" => new FormFileUploadReader(_temp.Rules, _temp.Store, new UploadMetrics(), new RequestVariants()),
            "streaming" => new StreamingUploadReader(_temp.Rules, _temp.Store),
            _ => new PipeUploadReader(_temp.Rules),
        };
        var context = new DefaultHttpContext();
        context.Request.Method = "POST";
        context.Request.ContentType = $"multipart/form-data; boundary={Boundary}";
        context.Request.Body = new MemoryStream(body ?? Body());
        var result = (await UploadsApi.Upload(context, reader, _temp.Store, _temp.Rules, new UploadMetrics(), new RequestVariants(), Cancel)).Result;
        return result is ProblemHttpResult problem ? (problem.StatusCode, problem.ProblemDetails.Title ?? "") : (201, "");
    }

    private static byte[] Body() => Encoding.UTF8.GetBytes(
        $"--{Boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.bin\"\r\nContent-Type: application/octet-stream\r\n\r\n{new string('x', 100_000)}\r\n--{Boundary}--\r\n");
}
