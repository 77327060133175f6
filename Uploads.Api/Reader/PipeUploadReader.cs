using Microsoft.AspNetCore.WebUtilities;
using Microsoft.Net.Http.Headers;
using Uploads.Api.Storage;

namespace Uploads.Api.Reader;

/// <summary>
/// The limit: the body is read where Kestrel received it. <see cref="MultipartBodyParser"/> finds each delimiter
/// in the request's <see cref="PipeReader"/> buffers with a vectorized search, and each run of file bytes goes to
/// <see cref="UploadFileWriter"/>, which copies it into aligned 1 MiB blocks, hashes each, and writes it with direct
/// I/O while the next fills: no thread-pool hop per small write, and no page cache.
/// Its page, with the rungs measured side by side: docs/pitfalls/Uploads.Reader.md.
/// </summary>
public sealed class PipeUploadReader(UploadRules rules) : IUploadReader
{
    public async Task ReadFilesAsync(HttpRequest request, string boundary, UploadBatch batch, CancellationToken cancellationToken)
    {
        var body = new MultipartBodyParser(request.BodyReader, boundary);
        while (await body.ReadNextSectionAsync(cancellationToken) is { } headers)
        {
            var section = new MultipartSection { Headers = headers };
            if (!ContentDispositionHeaderValue.TryParse(section.ContentDisposition, out var disposition) || !disposition.IsFileDisposition())
            {
                continue; // a plain form field, not a file: skipped by the next read
            }

            var fileName = HeaderUtilities.RemoveQuotes(disposition.FileNameStar.HasValue ? disposition.FileNameStar : disposition.FileName).Value;
            var contentType = rules.CheckFile(fileName, section.ContentType, batch.Count);
            await using var file = new UploadFileWriter(batch.Begin(fileName!, contentType), rules.Options.MaxFileBytes);
            await body.ReadSectionAsync(file.WriteAsync, cancellationToken);
            await file.CompleteAsync(cancellationToken);
        }

        if (batch.Count == 0)
        {
            throw UploadRules.NoFile();
        }
    }
}
