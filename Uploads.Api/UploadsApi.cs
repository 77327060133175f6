using System.Buffers;
using System.Diagnostics;
using System.Security.Cryptography;
using HttpPerf.ServiceDefaults.Selection;
using Microsoft.AspNetCore.Http.Features;
using Microsoft.AspNetCore.Http.HttpResults;
using Microsoft.Extensions.Options;
using Microsoft.Net.Http.Headers;
using Uploads.Api.Download;
using Uploads.Api.Reader;
using Uploads.Api.Storage;

namespace Uploads.Api;

public static class UploadsApi
{
    public static IEndpointRouteBuilder MapUploadsApi(this IEndpointRouteBuilder app)
    {
        var api = app.MapGroup("/uploads").WithTags("Uploads").DisableAntiforgery();

        api.MapPost("/", Upload)
            .WithSummary("Stores the files of a multipart/form-data body durably; answers with each one's id, size and SHA-256.");
        api.MapGet("/{id}", Download)
            .WithSummary("The stored bytes of one upload, with range support in optimized mode.");
        api.MapDelete("/{id}", Delete)
            .WithSummary("Deletes one upload and gives its bytes back to the storage quota. The id is the capability: 128 random bits that only the uploader was told.");

        if (app.ServiceProvider.GetRequiredService<IOptions<UploadOptions>>().Value.EnableSink)
        {
            api.MapPost("/sink", Sink)
                .WithSummary("Reads the body and discards it (?sha256=true: hashes it too, answered in X-Sha256): the upper bound for upload benchmarks.");
        }

        return app;
    }

    public static async Task<Results<Created<IReadOnlyList<UploadReceipt>>, ProblemHttpResult>> Upload(
        HttpContext context, IUploadReader reader, UploadStore store, UploadRules rules, UploadMetrics metrics, RequestVariants variants, CancellationToken cancellationToken)
    {
        AllowLargeBody(context, rules.Options.MaxRequestBytes);
        if (!MediaTypeHeaderValue.TryParse(context.Request.ContentType, out var mediaType)
            || !mediaType.MediaType.Equals("multipart/form-data", StringComparison.OrdinalIgnoreCase))
        {
            return Problem(StatusCodes.Status415UnsupportedMediaType, "Expected a multipart/form-data body.");
        }

        var boundary = HeaderUtilities.RemoveQuotes(mediaType.Boundary).Value;
        if (string.IsNullOrWhiteSpace(boundary))
        {
            return Problem(StatusCodes.Status400BadRequest, "The multipart boundary is missing.");
        }

        var started = Stopwatch.GetTimestamp();
        await using var batch = new UploadBatch(store);
        IReadOnlyList<UploadReceipt> receipts;
        try
        {
            await reader.ReadFilesAsync(context.Request, boundary, batch, cancellationToken);
            receipts = await batch.CommitAsync();
        }
        catch (UploadRejectedException rejected)
        {
            return await RefuseAsync(rejected.Status, rejected.Message);
        }
        catch (BadHttpRequestException bad)
        {
            return await RefuseAsync(bad.StatusCode, bad.Message);
        }
        catch (InvalidDataException malformed)
        {
            return await RefuseAsync(StatusCodes.Status400BadRequest, $"Malformed multipart body: {malformed.Message}");
        }
        catch (IOException error) when (!cancellationToken.IsCancellationRequested)
        {
            var failed = UploadRules.ReadFailed(error);
            return await RefuseAsync(failed.Status, failed.Message);
        }

        metrics.Uploaded(receipts.Sum(r => r.Size), Stopwatch.GetElapsedTime(started), variants.VariantOf(IUploadReader.Flag));
        return TypedResults.Created($"/uploads/{receipts[0].Id}", receipts);

        // A refusal, mid-body or not: what was stored goes first, then the answer, at once. The rest of the body is not
        // read: over HTTP/2 (the Gateway's relay of a body, Gateway.Upstream) the stream ends after the answer and the
        // sender stops; over HTTP/1.1 Kestrel reads on for a moment, then closes, and a client that reads while it sends
        // (curl, browsers) has the answer by then.
        async Task<ProblemHttpResult> RefuseAsync(int status, string title)
        {
            await batch.DisposeAsync();
            return Problem(status, title);
        }
    }

    public static async Task<IResult> Download(string id, UploadStore store, IDownloadWriter writer, CancellationToken cancellationToken)
    {
        var upload = await store.FindAsync(id, cancellationToken);
        if (upload is null)
        {
            return Problem(StatusCodes.Status404NotFound, $"No upload '{id}'.");
        }

        return await writer.CreateResultAsync(upload, store.DataPath(upload.Id), cancellationToken);
    }

    public static async Task<Results<NoContent, ProblemHttpResult>> Delete(string id, UploadStore store) =>
        await store.DeleteAsync(id) ? TypedResults.NoContent() : Problem(StatusCodes.Status404NotFound, $"No upload '{id}'.");

    /// <summary>
    /// Reads the body and discards it; with <paramref name="sha256"/> it also hashes what it reads and answers the hash
    /// in <c>X-Sha256</c>: the limit for any reader that must hash, as every upload rung does.
    /// </summary>
    public static async Task<Ok<long>> Sink(HttpContext context, IOptions<UploadOptions> options, CancellationToken cancellationToken, bool sha256 = false)
    {
        AllowLargeBody(context, options.Value.MaxRequestBytes);
        var buffer = ArrayPool<byte>.Shared.Rent(64 * 1024);
        using var hash = sha256 ? IncrementalHash.CreateHash(HashAlgorithmName.SHA256) : null;
        long total = 0;
        try
        {
            int read;
            while ((read = await context.Request.Body.ReadAsync(buffer, cancellationToken)) > 0)
            {
                total += read;
                hash?.AppendData(buffer, 0, read);
            }
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(buffer);
        }

        if (hash is not null)
        {
            context.Response.Headers["X-Sha256"] = Convert.ToHexStringLower(hash.GetHashAndReset());
        }

        return TypedResults.Ok(total);
    }

    private static void AllowLargeBody(HttpContext context, long limit)
    {
        if (context.Features.Get<IHttpMaxRequestBodySizeFeature>() is { IsReadOnly: false } feature)
        {
            feature.MaxRequestBodySize = limit;
        }
    }

    private static ProblemHttpResult Problem(int status, string title) =>
        TypedResults.Problem(statusCode: status, title: title);
}
