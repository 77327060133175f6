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
/// moved would be missed for minutes), the endpoints given again only when an answer differs (<see cref="RefreshToken"/>).
/// A name that does not resolve stays as it was, tried again at the next refresh.
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
        // Ends the looks of the tokens this provider made: the watcher that owns it disposes it with itself.
        private readonly CancellationTokenSource _disposed = new();

        // The looks of the last population's token: a population for another reason (configuration reloaded) ends them.
        private CancellationTokenSource? _looks;

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

            var answers = new List<(string Host, IPAddress[]? Addresses)>(named.Count);
            foreach (var (endpoint, name) in named)
            {
                var addresses = await LookUpAsync(name.Host, cancellationToken);
                answers.Add((name.Host, addresses));
                if (addresses is null)
                {
                    continue;
                }

                var at = endpoints.Endpoints.IndexOf(endpoint);
                endpoints.Endpoints.RemoveAt(at);
                foreach (var (address, i) in addresses.Select((a, i) => (a, i)))
                {
                    endpoints.Endpoints.Insert(at + i, ServiceEndpoint.Create(new IPEndPoint(address, name.Port)));
                }
            }

            var looks = CancellationTokenSource.CreateLinkedTokenSource(_disposed.Token);
            if (Interlocked.Exchange(ref _looks, looks) is { } previous)
            {
                previous.Cancel();
                previous.Dispose();
            }

            endpoints.AddChangeToken(new RefreshToken(refreshPeriod, token => MovedAsync(answers, token), looks.Token));
        }

        public ValueTask DisposeAsync()
        {
            _disposed.Cancel();
            return default;
        }

        /// <summary>Whether any name answers otherwise than when the endpoints were populated.</summary>
        private static async Task<bool> MovedAsync(List<(string Host, IPAddress[]? Addresses)> answers, CancellationToken cancellationToken)
        {
            foreach (var (host, before) in answers)
            {
                var now = await LookUpAsync(host, cancellationToken);
                if (!(now ?? []).SequenceEqual(before ?? []))
                {
                    return true;
                }
            }

            return false;
        }

        /// <summary>A name's addresses in a stable order, or null where it does not resolve (it stays as it was).</summary>
        private static async Task<IPAddress[]?> LookUpAsync(string host, CancellationToken cancellationToken)
        {
            try
            {
                var addresses = await Dns.GetHostAddressesAsync(host, AddressFamily.InterNetwork, cancellationToken);
                return addresses.Length == 0 ? null : [.. addresses.OrderBy(a => a.ToString(), StringComparer.Ordinal)];
            }
            catch (SocketException)
            {
                return null;
            }
        }
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
/// The change token of one population of endpoints: every period it has the names looked up again, and it says it has
/// changed only when an answer differs (a replica added, lost or moved). A token that changed on every period made
/// service discovery populate every name again and YARP reload its configuration every 5 s, for nothing, in every
/// replica at rest (docs/deploy.md, "What a list costs, and the swarm at rest"). Service discovery's watcher and YARP's
/// configuration wrap each name's tokens in <see cref="CompositeChangeToken"/>s, YARP's around the watchers', and a
/// composite that finds an inner token changed (<see cref="IChangeToken.HasChanged"/>) signals itself then, from the
/// asking thread, under its own lock. A <see cref="CancellationChangeToken"/> reports its change while its callbacks
/// still run on the signalling thread, taking those locks in the other order: the Gateway's six names deadlocked
/// (threads waiting in <c>CompositeChangeToken.OnChange</c>, <c>dotnet-stack</c>), and its destinations stayed as they
/// were: after a rolling update, every request it sent went to replicas that had left (504, docs/deploy.md). This one
/// says it has changed only once every callback has run, so a composite asked meanwhile answers from its own state.
/// </summary>
public sealed class RefreshToken : IChangeToken
{
    private readonly CancellationTokenSource _source = new();
    private volatile bool _changed;

    /// <param name="period">How long between two looks.</param>
    /// <param name="movedAsync">Looks the names up again: true if any answers otherwise (an error counts as true).</param>
    /// <param name="stopped">Ends the looks, the token unchanged (its owner is disposed).</param>
    public RefreshToken(TimeSpan period, Func<CancellationToken, Task<bool>> movedAsync, CancellationToken stopped)
    {
        // The looks outlive whatever populated the endpoints: they carry none of its AsyncLocals (a request's Activity).
        using (ExecutionContext.SuppressFlow())
        {
            _ = WatchAsync(period, movedAsync, stopped);
        }
    }

    public bool HasChanged => _changed;

    public bool ActiveChangeCallbacks => true;

    public IDisposable RegisterChangeCallback(Action<object?> callback, object? state) => _source.Token.UnsafeRegister(callback, state);

    private async Task WatchAsync(TimeSpan period, Func<CancellationToken, Task<bool>> movedAsync, CancellationToken stopped)
    {
        try
        {
            bool moved;
            do
            {
                await Task.Delay(period, stopped);
                try
                {
                    moved = await movedAsync(stopped);
                }
                catch (Exception) when (!stopped.IsCancellationRequested)
                {
                    moved = true; // the watcher populates again, and logs what fails there
                }
            }
            while (!moved);
        }
        catch (OperationCanceledException) when (stopped.IsCancellationRequested)
        {
            return;
        }

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
