using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;

namespace HttpPerf.ServiceDefaults.Http;

/// <summary>
/// What this replica's requests may hold whole at once: a share of the GC heap's hard limit
/// (<see cref="Options.ShareOfHeap"/>, half by default: 64 MiB of a 256 MiB container's 128). A rung that is about to
/// hold a body whole asks for it first, all at once or as the body grows; past the budget it is refused with an
/// <see cref="InsufficientMemoryException"/>, which <see cref="OutOfMemoryHandler"/> answers 503 with Retry-After, and
/// what it held is given back. Without it, a few such requests at once take the heap to its limit, and there any
/// allocation on any thread may fail: a request's own is answered 503, but the measured replicas also ended without a
/// word (exit 139, the runtime's abort) or were killed by the kernel (137, the heap's limit and the memory beside it
/// past the container's): docs/memory.md, "Under the demo's own load". The other half is for what asks nobody: the
/// requests that stream, garbage not yet collected, the heap's free space.
/// </summary>
/// <remarks>A request's share is its <see cref="HeldMemory"/>, given back when the request is over.</remarks>
public sealed class MemoryBudget(IOptions<MemoryBudget.Options> options)
{
    public const string Section = "MemoryBudget";

    private long _held;

    /// <summary>The bytes this replica's requests may hold at once.</summary>
    public long Bytes { get; } = (long)(GC.GetGCMemoryInfo().TotalAvailableMemoryBytes * options.Value.ShareOfHeap);

    /// <summary>The bytes held now.</summary>
    public long Held => Interlocked.Read(ref _held);

    internal bool TryTake(long bytes)
    {
        var held = Interlocked.Read(ref _held);
        while (held + bytes <= Bytes)
        {
            var seen = Interlocked.CompareExchange(ref _held, held + bytes, held);
            if (seen == held)
            {
                return true;
            }

            held = seen;
        }

        return false;
    }

    internal void Give(long bytes) => Interlocked.Add(ref _held, -bytes);

    internal static void AddTo(IServiceCollection services)
    {
        services.AddOptions<Options>().BindConfiguration(Section)
            .Validate(o => o.ShareOfHeap is > 0 and <= 1, $"{Section}:ShareOfHeap is a share of the GC heap's limit, above 0 and at most 1.")
            .ValidateOnStart();
        services.AddSingleton<MemoryBudget>();
        services.AddScoped<HeldMemory>();
    }

    /// <summary>Section <c>MemoryBudget</c>.</summary>
    public sealed class Options
    {
        /// <summary>
        /// The share of the GC heap's hard limit that requests holding whole bodies may take together. Half: one naive
        /// catalog (about 55 MB of products at the default size) fits in a 256 MiB container, two do not, as the memory
        /// table measured them fail (docs/memory.md).
        /// </summary>
        public double ShareOfHeap { get; set; } = 0.5;
    }
}
