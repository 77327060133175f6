using Gateway.Admin;
using HttpPerf.ServiceDefaults.Selection;

using Microsoft.Extensions.Options;

namespace Gateway.Edge;

/// <summary>
/// Who may force a mode at the edge. With <c>Gateway:AllowModeOverride</c> false (the default), an anonymous
/// client's <c>X-Perf-Mode</c> header and inbound <c>perf-mode</c> baggage are dropped before anything sees them,
/// so the flags file decides: forcing every hop naive would let any client make the system do its most
/// expensive work (64 such requests hold about 10 GB). A request with a valid <c>X-Admin-Key</c> may still force
/// one. The AppHost and the test harness turn the override on for the local demo and A/B runs.
/// </summary>
public sealed class EdgeModeGate(IOptionsMonitor<GatewayOptions> options, AdminKey adminKey) : IPerfModeGate
{
    public bool MayForce(HttpContext context) =>
        options.CurrentValue.AllowModeOverride || adminKey.Matches(context.Request.Headers[AdminKey.Header]);
}
