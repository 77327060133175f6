using OpenTelemetry.Trace;

namespace HttpPerf.ServiceDefaults.Telemetry;

/// <summary>
/// The platform's default sampler (parent-based, always on), less what runs on its own behind the requests:
/// <list type="bullet">
/// <item>The health probes: Frontend.Api's probe of a Catalog replica it left out
/// (<see cref="PerfTelemetry.ReplicaProbeActivity"/>, every second while it is out), and YARP's active health checks.
/// YARP 2.3 starts a <c>proxy.cluster_health_checks</c> activity per cluster and probe round, a
/// <c>proxy.destination_health_check</c> under it per destination, and the probe's HttpClient call to <c>/health</c>
/// under that: on the Aspire dashboard with 11 minutes of LoadGen, 617 of 942 traces (65%) were these probes.</item>
/// <item>The flag store's own Redis calls (in container mode and published): each service's SUBSCRIBE and HGETALL
/// when it loads its flags, and the Gateway's audit, an HGETALL every 10 s (FlagAudit): a root trace each, 54
/// <c>gateway: HGETALL</c> in the first 7 minutes of container mode. Aspire's Redis client traces every command; one
/// made inside a request (Uploads.Api's shared quota) has a parent and stays in that request's trace.</item>
/// </list>
/// Dropping a root drops the rest with it, since the parent-based rule drops the children of a dropped span. The
/// probes and polls still run; their result shows in each service's <c>/health</c> and the resource's health.
/// </summary>
internal sealed class ProbeSampler : Sampler
{
    private static readonly Sampler Default = new ParentBasedSampler(new AlwaysOnSampler());

    public override SamplingResult ShouldSample(in SamplingParameters samplingParameters) =>
        IsProbe(samplingParameters) || IsBackgroundRedisCall(samplingParameters)
            ? new SamplingResult(SamplingDecision.Drop)
            : Default.ShouldSample(samplingParameters);

    // The activity names of YARP 2.3's active health checks (ActiveHealthCheckMonitor), and Frontend.Api's probe.
    private static bool IsProbe(in SamplingParameters span) =>
        span.Name is "proxy.cluster_health_checks" or "proxy.destination_health_check" or PerfTelemetry.ReplicaProbeActivity;

    // A Redis command with no parent: Aspire's Redis instrumentation tags each span it starts db.system (or, in newer
    // semantic conventions, db.system.name) "redis".
    private static bool IsBackgroundRedisCall(in SamplingParameters span) =>
        span.ParentContext.TraceId == default
        && span.Tags?.Any(tag => tag.Key is "db.system" or "db.system.name" && tag.Value as string == "redis") == true;
}
