using Gateway.Edge;
using HttpPerf.ServiceDefaults.Hedging;

namespace Gateway.Replicas;

/// <summary>
/// The hedging of the Gateway's GET and HEAD routes to replicated services (section <c>Gateway:Hedging</c>), with the
/// same defaults as Frontend.Api's Catalog client (<c>Frontend:Replicas</c>); after <c>EjectAfterStrikes</c>, YARP's
/// passive health state takes a destination out for its cluster's <c>ReactivationPeriod</c>. Its page: docs/pitfalls/Frontend.Replicas.md.
/// </summary>
public sealed class HedgingOptions : HedgeOptions
{
    public const string Section = GatewayOptions.Section + ":Hedging";
}
