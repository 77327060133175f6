
namespace Bench.LocalSystem;

public sealed record LocalSystemOptions
{
    /// <summary>Products the Catalog seeds; null keeps the service default, <see cref="DefaultProducts"/>.</summary>
    public int? ProductCount { get; init; }

    /// <summary>The Catalog's own default (Catalog:ProductCount), about 25 MB of JSON: the bench's size unless <c>--products</c> says otherwise.</summary>
    public const int DefaultProducts = 86_000;

    /// <summary>Folder for the flags file, the SQLite store, uploads and logs; a new temp folder if null.</summary>
    public string? WorkDirectory { get; init; }

    /// <summary>Build configuration whose outputs are started; the caller's own by default.</summary>
    public string Configuration { get; init; } = LocalSystem.CurrentConfiguration;

    /// <summary>The Gateway's admin key (<c>Admin__Key</c>); no admin routes without one.</summary>
    public string? AdminKey { get; init; }

    /// <summary>
    /// <c>Gateway__AllowModeOverride</c>: whether any client may force a mode with <c>X-Perf-Mode</c> or baggage.
    /// On for the tests and benchmarks, as under the AppHost; a deployment keeps the Gateway's default, off.
    /// </summary>
    public bool AllowModeOverride { get; init; } = true;

    /// <summary>Replicas of Catalog.Api, Frontend.Api and Uploads.Api, each on its own port (the Uploads replicas share one data directory).</summary>
    public int Replicas { get; init; } = 1;

    /// <summary><c>ConnectionStrings__flags</c>: flags (and the uploads quota) in Redis instead of the flags file.</summary>
    public string? RedisConnectionString { get; init; }

    /// <summary>
    /// Runs the services on the far side of this delay line, listening on its far address: calls between them stay on
    /// that side, a client here crosses the line's round trip.
    /// </summary>
    public Latency.DelayLine? FarSide { get; init; }

    /// <summary>Extra environment for every service (e.g. an OTLP endpoint).</summary>
    public IReadOnlyDictionary<string, string> Environment { get; init; } = new Dictionary<string, string>();
}
