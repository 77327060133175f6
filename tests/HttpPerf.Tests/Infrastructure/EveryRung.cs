using System.Net.Http.Json;
using System.Security.Cryptography;
using HttpPerf.ServiceDefaults.Contract;

namespace HttpPerf.Tests.Infrastructure;

/// <summary>What every way of running the system must hold through its Gateway: each rung returns the same bytes.</summary>
public static class EveryRung
{
    /// <summary>
    /// The product list, the catalog and the export forced into each mode by header, identical (SHA-256); the product
    /// list over gRPC in each mode identical to the JSON one (Frontend.Grpc); a file
    /// uploaded in each mode stored with its SHA-256, and downloaded whole in each mode.
    /// </summary>
    public static async Task AssertSameBytesAsync(HttpClient gateway)
    {
        foreach (var path in new[] { "/api/products", "/api/catalog/products", "/api/catalog/export" })
        {
            var answers = new List<Http.Fetched>();
            foreach (var mode in PerfMode.All)
            {
                answers.Add(await Http.GetAsync(gateway, path, mode));
            }

            if (path == "/api/products")
            {
                foreach (var mode in PerfMode.All)
                {
                    answers.Add(await Http.GetAsync(gateway, "/api/products/grpc", mode));
                }
            }

            Assert.All(answers, a => Assert.Equal(200, a.Status));
            Assert.Single(answers.Select(a => a.Sha256).Distinct());
            Assert.True(answers[0].Body.Length > 100_000, $"{path}: {answers[0].Body.Length} bytes");
        }

        var file = RandomFile(1_500_000);
        var expected = Convert.ToHexStringLower(SHA256.HashData(file));
        foreach (var uploadMode in PerfMode.All)
        {
            var (receipt, _) = await UploadAsync(gateway, "/api/uploads", file, uploadMode);
            Assert.Equal(expected, receipt.Sha256);
            foreach (var downloadMode in PerfMode.All)
            {
                var download = await Http.GetAsync(gateway, $"/api/uploads/{receipt.Id}", downloadMode);
                Assert.Equal(200, download.Status);
                Assert.Equal(expected, download.Sha256);
            }
        }
    }

    /// <summary>Posts <paramref name="file"/> as one multipart part (in <paramref name="mode"/>, if given); asserts a 201 and one receipt, and returns it with <c>X-Perf-Variants</c>.</summary>
    public static async Task<(UploadReceipt Receipt, string Variants)> UploadAsync(HttpClient client, string path, byte[] file, string? mode)
    {
        var body = Multipart.Body([new Multipart.Part("file.bin", "application/octet-stream", file)]);
        using var request = new HttpRequestMessage(HttpMethod.Post, path) { Content = Multipart.Content(body) };
        if (mode is not null)
        {
            request.Headers.Add(Http.ModeHeader, mode);
        }

        using var response = await client.SendAsync(request, TestContext.Current.CancellationToken);
        Assert.Equal(201, (int)response.StatusCode);
        var receipts = await response.Content.ReadFromJsonAsync<List<UploadReceipt>>(TestContext.Current.CancellationToken);
        var variants = response.Headers.TryGetValues(Http.VariantsHeader, out var values) ? string.Join(", ", values) : "";
        return (Assert.Single(receipts!), variants);
    }

    public static byte[] RandomFile(int length)
    {
        var file = new byte[length];
        Random.Shared.NextBytes(file);
        return file;
    }
}
