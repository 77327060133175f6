using System.Collections.Concurrent;
using System.Diagnostics;
using System.Net;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.ServiceDefaults.Telemetry;
using Microsoft.Extensions.Options;
using Microsoft.Extensions.ServiceDiscovery;

namespace Frontend.Api.Replicas;

/// <summary>
/// The Catalog's replicas as service discovery lists them, each with its latency and attempts in flight, by which a
/// call's attempt takes the cheapest (as Finagle's and Linkerd's balancers do), and its standing: in the choice, or left out after
/// <see cref="ReplicaOptions.EjectAfterStrikes"/> strikes in a row (attempts that failed, timed out or lost a race)
/// and probed on <c>/alive</c> until it answers again, at least <see cref="ReplicaOptions.EjectionTime"/> later, and
/// twice that each time it is left out again without a real answer between (at most eight times), as Envoy's outlier
/// detection does. Service discovery has no health or ejection of its own, and its round robin is internal
/// (microsoft/aspire#3639, dotnet/extensions#7162): this is what it lacks. Its page: docs/pitfalls/Frontend.Replicas.md.
/// </summary>
internal sealed partial class ReplicaSet(ServiceEndpointResolver resolver, IOptions<ReplicaOptions> options, TimeProvider time, ILogger<ReplicaSet> logger) : IDisposable
{
    private readonly ConcurrentDictionary<string, Replica> _known = new(StringComparer.OrdinalIgnoreCase);
    private readonly HttpClient _probe = new(new SocketsHttpHandler { ConnectTimeout = TimeSpan.FromSeconds(1) }) { Timeout = TimeSpan.FromSeconds(1) };
    private readonly CancellationTokenSource _stopping = new();
    private int _next;

    private ReplicaOptions Options => options.Value;

    private DateTimeOffset Now => time.GetUtcNow();

    /// <summary>
    /// The replica for a call's next attempt: among those it has not tried, in the choice if any is (else any it has not
    /// tried, else any), the one whose recent latency times its attempts in flight is lowest (<see cref="Replica.Cost"/>),
    /// ties taken in turn. A call that could not hedge (<paramref name="canHedge"/> false: the budget is spent) takes no
    /// replica whose last attempt failed, timed out or lost a race while another has none: a frozen replica's cost decays
    /// between its strikes, and the call that tried it then, with no hedge to strike it, waited out the attempt timeout
    /// (13.2 s in CI run 17). It is tried again once the budget has a hedge for it.
    /// </summary>
    public async ValueTask<Replica> ChooseAsync(Uri serviceUri, List<Replica> tried, bool canHedge, CancellationToken cancellationToken)
    {
        var source = await resolver.GetEndpointsAsync($"{serviceUri.Scheme}://{serviceUri.Authority}", cancellationToken);
        var all = source.Endpoints.Select(e => _known.GetOrAdd(e.EndPoint.ToString()!, _ => new Replica(Address(e.EndPoint, serviceUri.Scheme), this))).ToList();
        if (all.Count == 0)
        {
            throw new HttpRequestException(HttpRequestError.NameResolutionError, $"Service discovery lists no replica of {serviceUri.Authority}.");
        }

        List<Replica> untried;
        lock (tried)
        {
            untried = all.Where(r => !tried.Contains(r)).ToList();
        }

        var candidates = untried.Where(r => r.InChoice).ToList() is { Count: > 0 } admitted ? admitted : untried.Count > 0 ? untried : all;
        if (!canHedge && candidates.Where(r => !r.Struck).ToList() is { Count: > 0 } sound)
        {
            candidates = sound;
        }

        var now = Stopwatch.GetTimestamp();
        var turn = (int)((uint)Interlocked.Increment(ref _next) % (uint)candidates.Count);
        var chosen = candidates.Skip(turn).Concat(candidates.Take(turn)).MinBy(r => r.Cost(now, Options.LatencyDecay))!;
        lock (tried)
        {
            tried.Add(chosen);
        }

        return chosen;
    }

    /// <summary>The replica at <paramref name="authority"/> (host:port), if a call has met it.</summary>
    public Replica? Find(string authority) => _known.Values.FirstOrDefault(r => r.Address.Authority == authority);

    public void Dispose()
    {
        _stopping.Cancel();
        _probe.Dispose();
    }

    private static Uri Address(EndPoint endPoint, string scheme) => endPoint switch
    {
        UriEndPoint uri => new Uri(uri.Uri.GetLeftPart(UriPartial.Authority)),
        DnsEndPoint dns => new UriBuilder(scheme, dns.Host, dns.Port).Uri,
        IPEndPoint ip => new UriBuilder(scheme, ip.Address.ToString(), ip.Port).Uri,
        _ => throw new InvalidOperationException($"Endpoints of type {endPoint.GetType()} are not supported."),
    };

    /// <summary>Probes a replica that was left out until it answers, then lets it back into the choice.</summary>
    private async Task ProbeUntilBackAsync(Replica replica, DateTimeOffset notBefore)
    {
        var interval = options.Value.ProbeInterval;
        while (!_stopping.IsCancellationRequested)
        {
            try
            {
                await Task.Delay(interval, time, _stopping.Token);
                if (time.GetUtcNow() < notBefore)
                {
                    continue;
                }

                using var probe = PerfTelemetry.ActivitySource.StartActivity(PerfTelemetry.ReplicaProbeActivity, ActivityKind.Internal, parentContext: default);
                using var answer = await _probe.GetAsync(new Uri(replica.Address, SystemContract.AlivePath), _stopping.Token);
                if (answer.IsSuccessStatusCode)
                {
                    replica.Readmit();
                    LogReadmitted(replica.Address);
                    return;
                }
            }
            catch (OperationCanceledException) when (_stopping.IsCancellationRequested)
            {
                return;
            }
            catch (Exception failure) when (failure is HttpRequestException or TaskCanceledException)
            {
                // Still silent or refusing: stay out, ask again.
            }
        }
    }

    [LoggerMessage(LogLevel.Warning, "Catalog replica {Replica} left out of the choice for at least {Seconds} s after {Strikes} strikes in a row (last: {Why})")]
    private partial void LogEjected(Uri replica, double seconds, int strikes, string why);

    [LoggerMessage(LogLevel.Information, "Catalog replica {Replica} answered its probe and is back in the choice")]
    private partial void LogReadmitted(Uri replica);

    /// <summary>One replica and its standing: in the choice or out, strikes, its latency (a peak-sensitive moving average) and attempts in flight.</summary>
    internal sealed class Replica(Uri address, ReplicaSet set)
    {
        private readonly Lock _lock = new();
        private int _strikes;
        private int _ejections;
        private readonly List<long> _inFlight = [];
        private double _latencyMs;
        private long _observed = Stopwatch.GetTimestamp();

        public Uri Address { get; } = address;

        public bool InChoice { get; private set; } = true;

        /// <summary>Whether its last attempt failed, timed out or lost a race (strikes not yet cleared by an answer).</summary>
        public bool Struck
        {
            get
            {
                lock (_lock)
                {
                    return _strikes > 0;
                }
            }
        }

        /// <summary>The request's address on this replica: its scheme, host and port, the call's path and query.</summary>
        public Uri Route(Uri serviceUri) => new UriBuilder(serviceUri) { Scheme = Address.Scheme, Host = Address.Host, Port = Address.Port }.Uri;

        /// <summary>
        /// What an attempt here costs, as Finagle's and Linkerd's balancers reckon it: the latency, decayed toward zero
        /// while nothing is seen of it (a slow replica is tried again once it has been left alone for a while), at least
        /// a millisecond (so a replica nothing is known of yet does not take every call at once), times one more than the
        /// attempts now in flight (a frozen replica's pile up). The oldest attempt still waiting counts as an answer that
        /// slow: a frozen replica answers nothing, so its average would otherwise decay toward zero while its silence
        /// grows, and, when no hedge is left in the budget to lose a race and strike it, keep drawing calls.
        /// </summary>
        public double Cost(long now, TimeSpan decay)
        {
            lock (_lock)
            {
                var waiting = _inFlight.Count == 0 ? 0 : Stopwatch.GetElapsedTime(_inFlight.Min(), now).TotalMilliseconds;
                return Math.Max(1, Math.Max(Decayed(now, decay), waiting)) * (_inFlight.Count + 1);
            }
        }

        /// <summary>An attempt begins here; its start, given to <see cref="End"/>.</summary>
        public long Begin()
        {
            var started = Stopwatch.GetTimestamp();
            lock (_lock)
            {
                _inFlight.Add(started);
            }

            return started;
        }

        /// <summary>
        /// The attempt begun at <paramref name="started"/> ended, however: its time, returned, is the replica's latency. A
        /// time above the average replaces it at once (one slow answer makes the replica expensive), a time below it
        /// pulls it down by how long ago the last one was.
        /// </summary>
        public TimeSpan End(long started)
        {
            var now = Stopwatch.GetTimestamp();
            var took = Stopwatch.GetElapsedTime(started, now);
            lock (_lock)
            {
                _inFlight.Remove(started);
                var ms = took.TotalMilliseconds;
                var current = Decayed(now, set.Options.LatencyDecay);
                _latencyMs = ms > current ? ms : current + (ms - current) * (1 - Weight(now, set.Options.LatencyDecay));
                _observed = now;
            }

            return took;
        }

        private double Decayed(long now, TimeSpan decay) => _latencyMs * Weight(now, decay);

        private double Weight(long now, TimeSpan decay) => Math.Exp(-Stopwatch.GetElapsedTime(_observed, now) / decay);

        public void Answered()
        {
            lock (_lock)
            {
                _strikes = 0;
                _ejections = 0;
            }
        }

        public void Strike(string why)
        {
            TimeSpan leftOut;
            int strikes;
            lock (_lock)
            {
                strikes = ++_strikes;
                if (!InChoice || strikes < set.Options.EjectAfterStrikes)
                {
                    return;
                }

                InChoice = false;
                leftOut = set.Options.EjectionTime * (1 << Math.Min(_ejections++, 3));
            }

            set.LogEjected(Address, leftOut.TotalSeconds, strikes, why);
            // Not under the request that made the last strike: the probes are no part of its trace.
            using (ExecutionContext.SuppressFlow())
            {
                _ = Task.Run(() => set.ProbeUntilBackAsync(this, set.Now + leftOut));
            }
        }

        public void Readmit()
        {
            lock (_lock)
            {
                _strikes = 0;
                InChoice = true;
            }
        }
    }
}
