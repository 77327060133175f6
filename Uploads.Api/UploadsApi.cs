using Microsoft.AspNetCore.Http.Features;
using Microsoft.AspNetCore.Http.HttpResults;
using Microsoft.AspNetCore.WebUtilities;
using Microsoft.Extensions.Options;
using Microsoft.Net.Http.Headers;
using Uploads.Api.Storage;

namespace Microsoft.AspNetCore.Builder;

public static class UploadsApi
{
    public static IEndpointRouteBuilder MapUploadsApi(this IEndpointRouteBuilder app)
    {
        var api = app.MapGroup("/uploads").WithTags("Uploads");

        api.MapPost("/", Upload)
            .WithSummary("Stores one multipart/form-data file durably; answers with its id, size and SHA-256.")
            .DisableAntiforgery();
        api.MapGet("/{id}", Download)
            .WithSummary("The stored bytes, with range support.");

        return app;
    }

    public static async Task<Results<Created<UploadReceipt>, ProblemHttpResult>> Upload(
        HttpContext context, UploadStore store, IOptions<UploadOptions> options, CancellationToken cancellationToken)
    {
        if (context.Features.Get<IHttpMaxRequestBodySizeFeature>() is { IsReadOnly: false } limit)
        {
            limit.MaxRequestBodySize = options.Value.MaxRequestBytes;
        }

        if (!MediaTypeHeaderValue.TryParse(context.Request.ContentType, out var mediaType)
            || !mediaType.MediaType.Equals("multipart/form-data", StringComparison.OrdinalIgnoreCase))
        {
            return Problem(StatusCodes.Status415UnsupportedMediaType, "Expected multipart/form-data.");
        }

        var boundary = HeaderUtilities.RemoveQuotes(mediaType.Boundary).Value;
        if (string.IsNullOrWhiteSpace(boundary))
        {
            return Problem(StatusCodes.Status400BadRequest, "The multipart boundary is missing.");
        }

        try
        {
            var reader = new MultipartReader(boundary, context.Request.Body);
            while (await reader.ReadNextSectionAsync(cancellationToken) is { } section)
            {
                if (ContentDispositionHeaderValue.TryParse(section.ContentDisposition, out var disposition)
                    && disposition.IsFileDisposition())
                {
                    var fileName = Path.GetFileName(HeaderUtilities.RemoveQuotes(disposition.FileNameStar.HasValue ? disposition.FileNameStar : disposition.FileName).Value ?? "");
                    var receipt = await store.SaveAsync(section.Body, fileName, section.ContentType ?? "application/octet-stream", cancellationToken);
                    return TypedResults.Created($"/uploads/{receipt.Id}", receipt);
                }
            }
        }
        catch (InvalidDataException exception)
        {
            return Problem(StatusCodes.Status400BadRequest, $"Malformed multipart body: {exception.Message}");
        }
        catch (IOException exception) when (exception.Message.Contains("Unexpected end of Stream", StringComparison.Ordinal))
        {
            return Problem(StatusCodes.Status400BadRequest, "The multipart body ended before its closing boundary.");
        }

        return Problem(StatusCodes.Status400BadRequest, "No file section in the multipart body.");
    }

    public static async Task<Results<PhysicalFileHttpResult, ProblemHttpResult>> Download(
        string id, UploadStore store, CancellationToken cancellationToken)
    {
        var receipt = await store.FindAsync(id, cancellationToken);
        if (receipt is null)
        {
            return Problem(StatusCodes.Status404NotFound, $"No upload '{id}'.");
        }

        return TypedResults.PhysicalFile(store.DataPath(receipt.Id), receipt.ContentType, enableRangeProcessing: true);
    }

    private static ProblemHttpResult Problem(int status, string title) =>
        TypedResults.Problem(statusCode: status, title: title);
}
