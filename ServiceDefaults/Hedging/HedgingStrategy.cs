using Microsoft.Extensions.Http.Resilience;
using Polly;
using Polly.Hedging;

namespace HttpPerf.ServiceDefaults.Hedging;

/// <summary>
/// Polly's hedging, as Frontend.Api's Catalog client and the Gateway's routes both use it: a second attempt once the
/// first has gone the call's learnt delay without headers (<see cref="HedgeDelay{TOptions}"/>) while the budget has a
/// hedge (<see cref="HedgeBudget{TOptions}"/>), one more attempt at once if an attempt fails outright; the first
/// answer wins and Polly cancels the other. Only a GET or HEAD is ever sent again: when slow, if <c>slow</c> names it
/// (the key its delay is learnt under; null: not when slow), and when failed, if <c>again</c> allows it (it has
/// somewhere else to go). Every other request waits for its one attempt. Its page: docs/pitfalls/Frontend.Replicas.md.
/// </summary>
public static class HedgingStrategy
{
    public static HedgingStrategyOptions<HttpResponseMessage> For<TOptions>(
        HedgeDelay<TOptions> delay, HedgeBudget<TOptions> budget, Func<HttpRequestMessage, string?> slow, Func<HttpRequestMessage, bool> again)
        where TOptions : HedgeOptions => new()
    {
        // One hedge when the first attempt is slow, and one more attempt if an attempt fails outright.
        MaxHedgedAttempts = 2,
        // With the call's token: a connection that could not be opened within HttpClients:ConnectTimeout (an address that
        // drops the SYN: a swarm task gone, a node lost, a name whose lookup was lost) fails as a cancellation, which the
        // outcome alone does not count as transient; it is tried again elsewhere like a refused one.
#pragma warning disable EXTEXP0001 // Experimental in 10.11: the overload that knows a connect timeout from the caller's cancellation.
        ShouldHandle = static args => ValueTask.FromResult(HttpClientResiliencePredicates.IsTransient(args.Outcome, args.Context.CancellationToken)),
#pragma warning restore EXTEXP0001
        DelayGenerator = args => ValueTask.FromResult(
            args.Context.GetRequestMessage() is { } request && HedgedRequests.IsSafe(request) && slow(request) is { } key && budget.HasToken
                ? delay.For(key)
                : Timeout.InfiniteTimeSpan),
        ActionGenerator = args =>
        {
            if (args.PrimaryContext.GetRequestMessage() is not { } primary || !HedgedRequests.IsSafe(primary) || !again(primary))
            {
                return null;
            }

            budget.Spend();
            args.ActionContext.SetRequestMessage(HedgedRequests.Copy(primary));
            return () => args.Callback(args.ActionContext);
        },
    };
}
