using System.Net;
using System.Net.Http.Headers;
using System.Net.Http.Json;
using System.Security.Cryptography;
using HttpPerf.Tests.Infrastructure;

namespace HttpPerf.Tests;

[Collection(SmallSystemCollection.Name)]
public sealed class UploadTests(SmallSystemFixture fixture)
{
    [Fact]
    public async Task An_upload_through_the_gateway_round_trips_its_sha256()
    {
        var bytes = RandomNumberGenerator.GetBytes(5 * 1024 * 1024 + 17);
        var expected = Convert.ToHexStringLower(SHA256.HashData(bytes));
        using var form = new MultipartFormDataContent { { new ByteArrayContent(bytes), "file", "report.bin" } };

        using var response = await fixture.Gateway.PostAsync("/api/uploads", form, TestContext.Current.CancellationToken);

        Assert.Equal(HttpStatusCode.Created, response.StatusCode);
        var receipt = (await response.Content.ReadFromJsonAsync<UploadReceipt>(TestContext.Current.CancellationToken))!;
        Assert.Equal(bytes.Length, receipt.Size);
        Assert.Equal(expected, receipt.Sha256);
        Assert.Equal("report.bin", receipt.FileName);
        Assert.Equal($"/uploads/{receipt.Id}", response.Headers.Location?.OriginalString);

        var stored = await Http.GetAsync(fixture.Gateway, $"/api/uploads/{receipt.Id}");
        Assert.Equal(200, stored.Status);
        Assert.Equal(expected, stored.Sha256);
        Assert.Empty(Directory.GetFiles(Path.Combine(fixture.System.UploadsDataDirectory, ".incoming")));
    }

    [Fact]
    public async Task A_body_that_is_not_multipart_is_a_415_problem()
    {
        using var content = new ByteArrayContent([1, 2, 3]);
        content.Headers.ContentType = new MediaTypeHeaderValue("application/octet-stream");

        using var response = await fixture.Gateway.PostAsync("/api/uploads", content, TestContext.Current.CancellationToken);

        Assert.Equal(HttpStatusCode.UnsupportedMediaType, response.StatusCode);
        Assert.Equal("application/problem+json", response.Content.Headers.ContentType?.MediaType);
    }

    [Fact]
    public async Task A_form_without_a_file_is_a_400_problem_and_stores_nothing()
    {
        var before = Directory.GetFiles(fixture.System.UploadsDataDirectory).Length;
        using var form = new MultipartFormDataContent { { new StringContent("just text"), "note" } };

        using var response = await fixture.Gateway.PostAsync("/api/uploads", form, TestContext.Current.CancellationToken);

        Assert.Equal(HttpStatusCode.BadRequest, response.StatusCode);
        Assert.Equal("application/problem+json", response.Content.Headers.ContentType?.MediaType);
        Assert.Equal(before, Directory.GetFiles(fixture.System.UploadsDataDirectory).Length);
    }

    [Fact]
    public async Task An_unknown_upload_id_is_a_404_problem()
    {
        var answer = await Http.GetAsync(fixture.Gateway, $"/api/uploads/{Guid.NewGuid():N}");

        Assert.Equal(404, answer.Status);
        Assert.Equal("application/problem+json", answer.MediaType);
    }
}
