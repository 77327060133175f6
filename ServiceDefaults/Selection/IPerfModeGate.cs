using Microsoft.AspNetCore.Http;

namespace HttpPerf.ServiceDefaults.Selection;

/// <summary>
/// Whether a request may force a mode (its <see cref="PerfMode.RequestHeader"/> header or its inbound
/// <see cref="PerfMode.BaggageKey"/> baggage). The services behind the Gateway trust their caller
/// (<see cref="TrustCaller"/>); the Gateway, facing anonymous clients, decides for itself.
/// </summary>
public interface IPerfModeGate
{
    bool MayForce(HttpContext context);
}
