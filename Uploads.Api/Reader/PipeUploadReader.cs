using Microsoft.AspNetCore.WebUtilities;
using Microsoft.Net.Http.Headers;
using Uploads.Api.Storage;

namespace Uploads.Api.Reader;

/// <summary>
/// The limit: the body is read where Kestrel received it. <see cref="MultipartBodyParser"/> finds each delimiter
/// in the request's <see cref="PipeReader"/> buffers with a vectorized search, and each run of file bytes goes,
/// as the slices of those buffers, to <see cref="UploadFileWriter"/>: hashed, then written with one gathered
/// write, synchronously, flushed to disk in the background as it grows. What the streaming rung spends on top is,
/// by the profile (docs/pitfalls/Uploads.Reader.md), not the boundary search (1% of its samples) but the thread-pool
/// hop of every asynchronous file write of at most 64 KB and the workers' spinning between them. Measured, 100 MiB
/// straight to Uploads.Api: 300 ms of CPU per upload against streaming's 518 and the sink's 155-170 (load average
/// about 5); through the Gateway (docs/results/uploads-100mib, quiet, load average 2.5-5): p50 494 ms against
/// streaming's 587, CPU 545 ms against 639 and the sink's 166, 0.38 of the sink's throughput. Above the sink it must
/// hash (about 58 ms) and copy into the page cache (50-60 ms); where the rest of the distance through the Gateway
/// goes is not yet measured.
/// </summary>
public sealed class PipeUploadReader(UploadRules rules, UploadStore store) : IUploadReader
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
            await using var file = store.Begin(fileName!, contentType, rules.Options.MaxFileBytes);
            await body.ReadSectionAsync(file.WriteAsync, cancellationToken);
            batch.Add(await file.CompleteAsync(cancellationToken));
        }

        if (batch.Count == 0)
        {
            throw UploadRules.NoFile();
        }
    }
}
