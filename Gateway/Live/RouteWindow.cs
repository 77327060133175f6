namespace Gateway.Live;

/// <summary>
/// One row of the landing page's table: a route (one lesson each: <c>products</c>, <c>catalog</c>, <c>export</c>,
/// <c>upload</c>, <c>download</c>; see the Gateway's appsettings.json) served in one mode over the last minute,
/// and that minute as <see cref="RecentExchanges.Slots"/> slots, oldest first: each slot's median in ms (null: no request).
/// </summary>
public sealed record RouteWindow(string Route, string Path, string Variant, string ServedBy, long Requests, double P50Ms, double P99Ms, double MegabytesPerSecond, IReadOnlyList<double?> P50MsBySlot);
