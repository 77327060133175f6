using System.Text;
using Catalog.Api.Data;

namespace Catalog.Api.WriteStrategy;

/// <summary>
/// The fix: rows go into the response's PipeWriter without a flush each; it is flushed once 64 KB are
/// waiting (and at the end), so the socket sees full segments and the client still gets bytes early. The
/// flush is also where backpressure applies, so memory stays at one buffer.
/// Its page, with the rungs measured side by side: docs/pitfalls/Catalog.WriteStrategy.md.
/// </summary>
public sealed class CoalescedExportWriter(CatalogStore store) : ICatalogExportWriter
{
    private const int FlushThreshold = 64 * 1024;

    public async Task WriteExportAsync(HttpContext context, CancellationToken cancellationToken)
    {
        context.Response.ContentType = CsvRow.ContentType;
        var writer = context.Response.BodyWriter;
        Encoding.UTF8.GetBytes(CsvRow.Header, writer);
        await foreach (var product in store.StreamAllAsync(0, cancellationToken))
        {
            Encoding.UTF8.GetBytes(CsvRow.Format(product), writer);
            if (writer.UnflushedBytes >= FlushThreshold)
            {
                await writer.FlushAsync(cancellationToken);
            }
        }

        await writer.FlushAsync(cancellationToken);
    }
}
