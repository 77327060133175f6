using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;

namespace Benchmarks.Hosting;

/// <summary>Kestrel serving one precomputed JSON array from memory: the client-side benchmarks' server.</summary>
public static class StaticJsonServer
{
    public const string Path = "/items";

    public static Task<KestrelHost> StartAsync(byte[] json) => KestrelHost.StartAsync(
        new Dictionary<string, string?>(),
        _ => { },
        app => app.MapGet(Path, () => Results.Bytes(json, "application/json")));
}
