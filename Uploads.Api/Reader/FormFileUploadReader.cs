using HttpPerf.ServiceDefaults.Selection;
using Microsoft.AspNetCore.Http.Features;
using Uploads.Api.Storage;

namespace Uploads.Api.Reader;

/// <summary>
/// What teams ship: <c>IFormFile</c>. Reading the form (what parameter binding does before the handler
/// runs) buffers every file section, in memory up to 64 KB and the rest in a temp file, and only then
/// hands over the files, which are copied again to storage. Each byte is written to disk twice, the
/// limits are checked only after the whole body has arrived, and the 128 MB default section limit has
/// to be raised (as here) before a large file is accepted at all.
/// Its page, with the rungs measured side by side: docs/pitfalls/Uploads.Reader.md.
/// </summary>
public sealed class FormFileUploadReader(UploadRules rules, UploadStore store, UploadMetrics metrics, RequestVariants variants) : IUploadReader
{
    public async Task ReadFilesAsync(HttpRequest request, string boundary, UploadBatch batch, CancellationToken cancellationToken)
    {
        // What [RequestFormLimits] or WithFormOptions() set for an endpoint.
        var formOptions = new FormOptions { MultipartBodyLengthLimit = rules.Options.MaxRequestBytes };
        request.HttpContext.Features.Set<IFormFeature>(new FormFeature(request, formOptions));
        IFormCollection form = await request.ReadFormAsync(cancellationToken);

        foreach (IFormFile file in form.Files)
        {
            var contentType = rules.CheckFile(file.FileName, file.ContentType, batch.Count);
            if (file.Length > rules.Options.MaxFileBytes)
            {
                throw UploadRules.TooLarge(rules.Options.MaxFileBytes);
            }

            if (file.Length > formOptions.MemoryBufferThreshold)
            {
                metrics.Spooled(file.Length);
                variants.Buffered(inMemory: 0, inTempFile: file.Length);
            }
            else
            {
                variants.Buffered(inMemory: file.Length);
            }

            await using var content = file.OpenReadStream();
            await store.WriteAsync(content, batch.Begin(file.FileName, contentType), rules.Options.MaxFileBytes, cancellationToken);
        }

        if (batch.Count == 0)
        {
            throw UploadRules.NoFile();
        }
    }
}
