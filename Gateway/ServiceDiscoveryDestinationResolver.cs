using Microsoft.Extensions.Primitives;
using Microsoft.Extensions.ServiceDiscovery;
using Yarp.ReverseProxy.Configuration;
using Yarp.ReverseProxy.ServiceDiscovery;

namespace Gateway;

/// <summary>
/// Turns a cluster address like <c>http://catalog</c> into the endpoints service discovery knows
/// (<c>services__catalog__http__0</c>), and re-resolves when they change. Aspire ships this as
/// Microsoft.Extensions.ServiceDiscovery.Yarp; that package is not in this machine's mirror, so this is
/// the few lines of it the Gateway needs.
/// </summary>
internal sealed class ServiceDiscoveryDestinationResolver(ServiceEndpointResolver resolver) : IDestinationResolver
{
    public async ValueTask<ResolvedDestinationCollection> ResolveDestinationsAsync(
        IReadOnlyDictionary<string, DestinationConfig> destinations, CancellationToken cancellationToken)
    {
        var resolved = new Dictionary<string, DestinationConfig>();
        var changeTokens = new List<IChangeToken>();
        foreach (var (id, destination) in destinations)
        {
            var address = new Uri(destination.Address);
            var endpoints = await resolver.GetEndpointsAsync(address.GetLeftPart(UriPartial.Authority), cancellationToken);
            changeTokens.Add(endpoints.ChangeToken);
            foreach (var endpoint in endpoints.Endpoints)
            {
                // Configured endpoints come back as URIs ("http://127.0.0.1:5001"), DNS ones as host:port.
                var text = endpoint.ToString()!;
                var target = new Uri(text.Contains("://", StringComparison.Ordinal) ? text : $"{address.Scheme}://{text}");
                var rewritten = new UriBuilder(address) { Host = target.Host, Port = target.Port }.Uri.ToString();
                resolved[$"{id}[{text}]"] = destination with { Address = rewritten };
            }
        }

        return new ResolvedDestinationCollection(resolved, new CompositeChangeToken(changeTokens));
    }
}
