using Microsoft.AspNetCore.Http;

namespace HttpPerf.ServiceDefaults.Flags;

/// <summary>
/// Whether a request may force a mode (its <see cref="PerfMode.RequestHeader"/> header or its inbound
/// <see cref="PerfMode.BaggageKey"/> baggage). The services behind the Gateway trust their caller
/// (<see cref="TrustCaller"/>); the Gateway, facing anonymous clients, decides for itself.
/// </summary>
public interface IPerfModeGate
{
    bool MayForce(HttpContext context);
}

/// <summary>The default: the caller is the Gateway or another service, so what it asks for is served.</summary>
internal sealed class TrustCaller : IPerfModeGate
{
    public bool MayForce(HttpContext context) => true;
}
