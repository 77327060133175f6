using Catalog.Api.Data;
using HttpPerf.ServiceDefaults.Http;
using HttpPerf.ServiceDefaults.Selection;
using Microsoft.AspNetCore.Mvc.Abstractions;
using Microsoft.AspNetCore.Mvc;

namespace Catalog.Api.Serialization;

/// <summary>
/// What teams ship: load the whole list, return it as an MVC <see cref="ObjectResult"/> (a controller's
/// <c>Ok(products)</c>) with <c>AddNewtonsoftJson()</c>. Newtonsoft.Json writes synchronously, so MVC's
/// formatter buffers the body in a FileBufferingWriteStream: in memory up to 32 KB, the rest spooled to a
/// temp file, and only then copied to the socket. Every product is held in memory at once, the body is
/// written twice (disk, then network), and the client sees no byte until serialization is over. The list is asked of
/// the replica's memory budget first (<see cref="HeldMemory"/>): under a container's limit a second one at once is
/// refused with a 503, where it would have taken the heap to its limit and the replica with it (docs/memory.md).
/// Its page, with the rungs measured side by side: docs/pitfalls/Catalog.Serialization.md.
/// </summary>
public sealed class NaiveCatalogWriter(CatalogStore store, RequestVariants variants, HeldMemory memory) : ICatalogWriter
{
    // MVC's FileBufferingWriteStream keeps the first 32 KB of the body in memory and spools the rest.
    private const int FormatterMemoryThreshold = 32 * 1024;

    /// <summary>MVC's output formatters, as a controller returning Ok(list) has them: Newtonsoft.Json's, buffering.</summary>
    public static void AddFormatters(IServiceCollection services) => services.AddMvcCore().AddNewtonsoftJson();

    public async Task WriteAllProductsAsync(HttpContext context, int after, CancellationToken cancellationToken)
    {
        memory.Grow(store.ListBytes(after), "the catalog as one list");
        List<Product> products = await store.ListAllAsync(after, cancellationToken);
        var actionContext = new ActionContext(context, context.GetRouteData(), new ActionDescriptor());
        await new ObjectResult(products).ExecuteResultAsync(actionContext);
        variants.Buffered(
            inMemory: Math.Min(variants.ResponseBytes, FormatterMemoryThreshold),
            inTempFile: Math.Max(0, variants.ResponseBytes - FormatterMemoryThreshold));
    }
}
