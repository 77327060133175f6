using Microsoft.AspNetCore.Http;

namespace HttpPerf.ServiceDefaults.Selection;

/// <summary>The default: the caller is the Gateway or another service, so what it asks for is served.</summary>
internal sealed class TrustCaller : IPerfModeGate
{
    public bool MayForce(HttpContext context) => true;
}
