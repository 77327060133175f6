using System.Diagnostics;
using System.Net.Http.Json;
using System.Text.Json;
using Bench.LocalSystem;
using Microsoft.Extensions.Configuration;

namespace HttpPerf.Tests.Infrastructure;

/// <summary>
/// The Gateway's own view of its replicas, as its landing page reads it (<c>GET /live</c>, <c>destinations</c>): each
/// destination's active and passive verdicts, and whether it is in the rotation. A test that waits for a replica to be
/// taken out or to rejoin waits on this, within a bound taken from the cluster's health settings in
/// Gateway/appsettings.json, and says what it saw last when the bound runs out.
/// </summary>
public static class GatewayHealth
{
    public sealed record Destination(string Cluster, string Address, string Active, string Passive, bool Available)
    {
        public override string ToString() => $"{Cluster} {Address}: active {Active}, passive {Passive}, {(Available ? "in" : "out of")} the rotation";
    }

    /// <summary>
    /// How long a replica that answers again may take to be back in <paramref name="cluster"/>'s rotation. The active
    /// verdict turns on the next probe that answers, which may wait for one already in flight to time out (interval +
    /// timeout, twice). The passive one lapses the longer of the reactivation period and YARP's detection window
    /// (<c>TransportFailureRate:DetectionWindowSize</c>) after it was last given, and a failure still in the window when
    /// the replica answers again can give it once more.
    /// </summary>
    public static TimeSpan RejoinBound(string cluster)
    {
        var health = Settings.GetSection($"ReverseProxy:Clusters:{cluster}:HealthCheck");
        var interval = health.GetValue<TimeSpan>("Active:Interval");
        var timeout = health.GetValue<TimeSpan>("Active:Timeout");
        var reactivation = health.GetValue<TimeSpan>("Passive:ReactivationPeriod");
        var window = Settings.GetValue<TimeSpan>("TransportFailureRate:DetectionWindowSize");
        Assert.True(interval > TimeSpan.Zero && timeout > TimeSpan.Zero && reactivation > TimeSpan.Zero && window > TimeSpan.Zero, $"no health settings for the cluster {cluster}");
        return window + (reactivation > window ? reactivation : window) + (2 * (interval + timeout));
    }

    /// <summary>Every destination of every cluster, as the Gateway sees them now.</summary>
    public static async Task<IReadOnlyList<Destination>> ReadAsync(HttpClient gateway)
    {
        var live = await gateway.GetFromJsonAsync<JsonElement>("/live", TestContext.Current.CancellationToken);
        return [.. live.GetProperty("destinations").EnumerateArray().Select(d => new Destination(
            d.GetProperty("cluster").GetString()!, d.GetProperty("address").GetString()!, d.GetProperty("active").GetString()!,
            d.GetProperty("passive").GetString()!, d.GetProperty("available").GetBoolean()))];
    }

    /// <summary>
    /// Waits until the destination of <paramref name="cluster"/> that <paramref name="replica"/> picks out is in the
    /// rotation (<paramref name="available"/>) or out of it, within <paramref name="bound"/>; how long it took, or a
    /// failure that names what it waited for and what the Gateway showed last.
    /// </summary>
    public static async Task<TimeSpan> WaitAsync(HttpClient gateway, string cluster, Func<Uri, bool> replica, bool available, TimeSpan bound, string what)
    {
        var clock = Stopwatch.StartNew();
        IReadOnlyList<Destination> seen = [];
        var held = await Poll.UntilAsync(
            async () => (seen = await ReadAsync(gateway)).Any(d => d.Cluster == cluster && replica(new Uri(d.Address)) && d.Available == available),
            bound,
            TimeSpan.FromMilliseconds(250));
        Assert.True(held,
            $"{what} was not {(available ? "back in" : "out of")} the Gateway's rotation of {cluster} within {bound.TotalSeconds:F0} s " +
            $"(its health settings' bound); the Gateway showed last: {string.Join("; ", seen.Where(d => d.Cluster == cluster))}");
        return clock.Elapsed;
    }

    private static readonly IConfiguration Settings = new ConfigurationBuilder()
        .AddJsonFile(Path.Combine(LocalSystem.RepositoryRoot(), "Gateway", "appsettings.json"))
        .Build();
}
