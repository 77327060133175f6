using OpenTelemetry.Trace;

namespace HttpPerf.ServiceDefaults.Telemetry;

/// <summary>
/// The platform's default sampler (parent-based, always on), less the health probes: Frontend.Api's probe of a Catalog
/// replica it left out (<see cref="PerfTelemetry.ReplicaProbeActivity"/>, every second while it is out), and YARP's active health checks. YARP 2.3 starts a
/// <c>proxy.cluster_health_checks</c> activity per cluster and probe round, a <c>proxy.destination_health_check</c>
/// under it per destination, and the probe's HttpClient call to <c>/health</c> under that: on the Aspire dashboard
/// with 11 minutes of LoadGen, 617 of 942 traces (65%) were these probes. Dropping the round drops the rest with it,
/// since the parent-based rule drops the children of a dropped span. The probes still run and still decide which
/// destinations are healthy; their result shows in each service's <c>/health</c> and the resource's health.
/// </summary>
internal sealed class ProbeSampler : Sampler
{
    private static readonly Sampler Default = new ParentBasedSampler(new AlwaysOnSampler());

    public override SamplingResult ShouldSample(in SamplingParameters samplingParameters) =>
        // The activity names of YARP 2.3's active health checks (ActiveHealthCheckMonitor).
        samplingParameters.Name is "proxy.cluster_health_checks" or "proxy.destination_health_check" or PerfTelemetry.ReplicaProbeActivity
            ? new SamplingResult(SamplingDecision.Drop)
            : Default.ShouldSample(samplingParameters);
}
