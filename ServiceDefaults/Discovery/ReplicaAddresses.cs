using System.Diagnostics.CodeAnalysis;
using System.Net;
using System.Net.Sockets;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;
using Microsoft.Extensions.Primitives;
using Microsoft.Extensions.ServiceDiscovery;

namespace HttpPerf.ServiceDefaults.Discovery;

/// <summary>
/// Where one name stands for every replica of a service (a swarm service's <c>tasks.catalog</c>, a Kubernetes headless
/// Service), each caller must see each replica as its own endpoint: the Gateway balances, health-checks and hedges
/// destinations, Frontend.Api's Catalog client strikes and probes replicas (docs/deploy.md, "On a swarm"). Service
/// discovery's configuration provider gives such a name as one endpoint, and HttpClient resolves it once per
/// connection and keeps the connection: every call lands on whichever replica it met first. The package that
/// resolves names into addresses (Microsoft.Extensions.ServiceDiscovery.Dns) is not served here, and gives endpoints
/// without the configured port. So: with <see cref="ReplicaAddressOptions.Expand"/> on, each configured endpoint whose
/// host is a name becomes one endpoint per address the name has now, on the configured port, looked up again every
/// <see cref="ReplicaAddressOptions.RefreshPeriod"/> (Docker's DNS gives its answers a TTL of 600 s: a replica that
/// moved would be missed for minutes). A name that does not resolve stays as it was, tried again at the next refresh.
/// </summary>
public sealed class ReplicaAddresses(IOptionsMonitor<ReplicaAddressOptions> options) : IServiceEndpointProviderFactory
{
    public bool TryCreateProvider(ServiceEndpointQuery query, [NotNullWhen(true)] out IServiceEndpointProvider? provider)
    {
        provider = options.CurrentValue.Expand ? new ExpandingProvider(options.CurrentValue.RefreshPeriod) : null;
        return provider is not null;
    }

    /// <summary>Runs after the configuration provider (registered after it), on the endpoints it listed.</summary>
    private sealed class ExpandingProvider(TimeSpan refreshPeriod) : IServiceEndpointProvider
    {
        public async ValueTask PopulateAsync(IServiceEndpointBuilder endpoints, CancellationToken cancellationToken)
        {
            // Configuration gives a name as the URI it was written as (http://catalog:8080), a provider of names as a DnsEndPoint.
            var named = endpoints.Endpoints
                .Select(e => (Endpoint: e, Name: e.EndPoint switch
                {
                    UriEndPoint { Uri: { HostNameType: UriHostNameType.Dns } uri } => (Host: uri.Host, uri.Port),
                    DnsEndPoint dns => (dns.Host, dns.Port),
                    _ => default,
                }))
                .Where(e => e.Name.Host is not null)
                .ToList();
            if (named.Count == 0)
            {
                return;
            }

            endpoints.AddChangeToken(new RefreshToken(refreshPeriod));
            foreach (var (endpoint, name) in named)
            {
                IPAddress[] addresses;
                try
                {
                    addresses = await Dns.GetHostAddressesAsync(name.Host, AddressFamily.InterNetwork, cancellationToken);
                }
                catch (SocketException)
                {
                    continue;
                }

                if (addresses.Length == 0)
                {
                    continue;
                }

                var at = endpoints.Endpoints.IndexOf(endpoint);
                endpoints.Endpoints.RemoveAt(at);
                foreach (var (address, i) in addresses.OrderBy(a => a.ToString(), StringComparer.Ordinal).Select((a, i) => (a, i)))
                {
                    endpoints.Endpoints.Insert(at + i, ServiceEndpoint.Create(new IPEndPoint(address, name.Port)));
                }
            }
        }

        public ValueTask DisposeAsync() => default;
    }

    public static void AddTo(IServiceCollection services)
    {
        services.AddOptions<ReplicaAddressOptions>().BindConfiguration(ReplicaAddressOptions.Section)
            .Validate(o => o.RefreshPeriod > TimeSpan.Zero, $"{ReplicaAddressOptions.Section}:RefreshPeriod must be positive.")
            .ValidateOnStart();
        services.AddSingleton<IServiceEndpointProviderFactory, ReplicaAddresses>();
    }
}

/// <summary>
/// The change token that has a name looked up again after a period. Service discovery's watcher and YARP's configuration
/// wrap each name's tokens in <see cref="CompositeChangeToken"/>s, YARP's around the watchers', and a composite that finds
/// an inner token changed (<see cref="IChangeToken.HasChanged"/>) signals itself then, from the asking thread, under its
/// own lock. A <see cref="CancellationChangeToken"/> reports its change while its callbacks still run on the timer's
/// thread, taking those locks in the other order: the Gateway's six names, refreshed together, deadlocked (threads
/// waiting in <c>CompositeChangeToken.OnChange</c>, <c>dotnet-stack</c>), and its destinations stayed as they were:
/// after a rolling update, every request it sent went to replicas that had left (504, docs/deploy.md). This one
/// says it has changed only once every callback has run, so a composite asked meanwhile answers from its own state.
/// </summary>
public sealed class RefreshToken : IChangeToken
{
    private readonly CancellationTokenSource _source = new();
    private readonly Timer _timer;
    private volatile bool _changed;

    public RefreshToken(TimeSpan period)
    {
        // Started once assigned, so that however short the period, Fire finds the timer it disposes.
        _timer = new Timer(static state => ((RefreshToken)state!).Fire(), this, Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);
        _timer.Change(period, Timeout.InfiniteTimeSpan);
    }

    public bool HasChanged => _changed;

    public bool ActiveChangeCallbacks => true;

    public IDisposable RegisterChangeCallback(Action<object?> callback, object? state) => _source.Token.UnsafeRegister(callback, state);

    private void Fire()
    {
        _timer.Dispose();
        _source.Cancel();
        _changed = true;
    }
}

/// <summary>Configuration section <c>ServiceDiscovery:ReplicaAddresses</c>: names that stand for every replica, expanded.</summary>
public sealed class ReplicaAddressOptions
{
    public const string Section = "ServiceDiscovery:ReplicaAddresses";

    /// <summary>Expand each configured name into its addresses (off: the name is one endpoint, as service discovery gives it).</summary>
    public bool Expand { get; set; }

    /// <summary>How often the names are looked up again (default 5 s): how soon a replica added, lost or moved is seen.</summary>
    public TimeSpan RefreshPeriod { get; set; } = TimeSpan.FromSeconds(5);
}
