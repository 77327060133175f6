namespace Gateway.Live;

/// <summary>
/// What the landing page at <c>/</c> shows, refreshed every few seconds: the flags, the last minute by route and
/// variant, and the replicas the Gateway routes to.
/// </summary>
public sealed record LiveView(double WindowSeconds, IReadOnlyList<LiveFlag> Flags, IReadOnlyList<RouteWindow> Routes, IReadOnlyList<LiveDestination> Destinations);
