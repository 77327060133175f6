namespace Gateway.Live;

/// <summary>What the landing page at <c>/</c> shows, refreshed every few seconds: the flags, and the last minute by route and variant.</summary>
public sealed record LiveView(double WindowSeconds, IReadOnlyList<LiveFlag> Flags, IReadOnlyList<RouteWindow> Routes);
