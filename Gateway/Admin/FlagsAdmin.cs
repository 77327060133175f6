using System.Diagnostics.Metrics;
using System.Net.Http.Json;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.ServiceDefaults.FlagSources;
using HttpPerf.ServiceDefaults.Telemetry;
using HttpPerf.ServiceDefaults;

namespace Gateway.Admin;

/// <summary>
/// Reads and changes the system's flags (the shared file, or Redis: <see cref="IFlagStore"/>) for the admin API,
/// tells the <see cref="FlagAudit"/> who is changing what (it records each change once it is in the store) and counts
/// it, and asks each service which variant it serves, to show a change land.
/// </summary>
public sealed class FlagsAdmin(IFlagStore store, IHttpClientFactory httpClients, FlagAudit audit)
{
    private static readonly Counter<long> Changes = PerfTelemetry.Meter.CreateCounter<long>(
        "httpperf.flag.changes", description: "Pitfall flag changes made through the admin API.");

    public async Task<IReadOnlyList<FlagState>> ListAsync(IReadOnlyDictionary<string, string> gatewayServing, CancellationToken cancellationToken)
    {
        var file = await store.ReadAsync(cancellationToken);
        var services = Pitfalls.All.Select(p => p.Service).Where(s => s != SystemContract.Gateway).Distinct();
        var serving = new Dictionary<string, string>(gatewayServing);
        foreach (var answer in await Task.WhenAll(services.Select(s => ServingAsync(s, cancellationToken))))
        {
            foreach (var (flag, variant) in answer)
            {
                serving[flag] = variant;
            }
        }

        return Pitfalls.All
            .Select(p => new FlagState(p.Flag, p.Service, file[p.Flag], serving.GetValueOrDefault(p.Flag), p.Naive, p.Optimized))
            .ToList();
    }

    public async Task SetAsync(IReadOnlyDictionary<string, string> changes, string source, string keyId, string? clientAddress, CancellationToken cancellationToken)
    {
        var before = await store.ReadAsync(cancellationToken);
        audit.Expect(changes);
        try
        {
            await store.SetAsync(changes, cancellationToken);
        }
        catch
        {
            audit.Forget(changes);
            throw;
        }

        audit.Written(before, changes, source, keyId, clientAddress);
        foreach (var (flag, variant) in changes)
        {
            Changes.Add(1, new("feature_flag.key", flag), new("feature_flag.result.variant", variant));
        }
    }

    /// <summary>A service's <c>/flags</c>, found by service discovery; nothing if it does not answer in 2 s.</summary>
    private async Task<IReadOnlyDictionary<string, string>> ServingAsync(string service, CancellationToken cancellationToken)
    {
        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        timeout.CancelAfter(TimeSpan.FromSeconds(2));
        try
        {
            var client = httpClients.CreateClient(nameof(FlagsAdmin));
            return await client.GetFromJsonAsync<Dictionary<string, string>>($"http://{service}{SystemContract.FlagsPath}", timeout.Token) ?? [];
        }
        catch (Exception exception) when (exception is HttpRequestException or OperationCanceledException or Polly.Timeout.TimeoutRejectedException)
        {
            return new Dictionary<string, string>();
        }
    }
}
