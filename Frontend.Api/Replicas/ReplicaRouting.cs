using HttpPerf.ServiceDefaults.Hedging;

namespace Frontend.Api.Replicas;

/// <summary>
/// Under the hedging strategy, once per attempt: sends the attempt to a replica that this call has not tried yet,
/// the cheapest by its recent latency and load (<see cref="ReplicaSet.ChooseAsync"/>), and tells the set how it went:
/// how long the attempt took (the replica's latency), an answer clears the replica's strikes and teaches
/// <see cref="HedgeDelay{TOptions}"/> how long headers take; a failure, a timeout or a lost race (cancelled while the caller still
/// waits) is a strike. A read resumed after its replica went silent mid-body (<see cref="ResumingCatalogContent{TOptions}"/>) names
/// that replica: a strike, and the call starts elsewhere. Its page: docs/pitfalls/Frontend.Replicas.md.
/// </summary>
internal sealed class ReplicaRouting(ReplicaSet replicas, HedgeDelay<ReplicaOptions> delay, HedgeBudget<ReplicaOptions> budget) : DelegatingHandler
{
    private static readonly HttpRequestOptionsKey<Call> CallKey = new("catalog.replicas.call");
    private static readonly HttpRequestOptionsKey<string> SilentReplica = new(CatalogClient.ICatalogApi.SilentReplicaKey);

    protected override async Task<HttpResponseMessage> SendAsync(HttpRequestMessage request, CancellationToken cancellationToken)
    {
        // The first attempt records the service's own address ("http://catalog/..."), before it is rewritten to a
        // replica's, and every later attempt of the call (hedge copies carry the same options) starts from it.
        if (!request.Options.TryGetValue(CallKey, out var call))
        {
            call = new Call(request.RequestUri!);
            request.Options.Set(CallKey, call);
            budget.Earn();
            // The rest of a read whose replica went silent mid-body: a strike against that one, and not it again.
            if (request.Options.TryGetValue(SilentReplica, out var silent) && replicas.Find(silent) is { } stalled)
            {
                stalled.Strike("silent mid-body");
                call.Tried.Add(stalled);
            }
        }

        var replica = await replicas.ChooseAsync(call.ServiceUri, call.Tried, budget.HasToken, cancellationToken);
        request.RequestUri = replica.Route(call.ServiceUri);
        var started = replica.Begin();
        HttpResponseMessage response;
        try
        {
            response = await base.SendAsync(request, cancellationToken);
        }
        catch (Exception failure)
        {
            // Whatever ended it, the attempt is no longer in flight: a replica's oldest attempt still waiting is its
            // latency (ReplicaSet.Replica.Cost), so one never ended would keep it out of the choice for good.
            var took = replica.End(started);
            switch (failure)
            {
                // Cancelled by the hedging strategy (another attempt answered first) or the attempt timeout; a caller
                // that left cancels every attempt, and that says nothing about the replica.
                case OperationCanceledException when cancellationToken.IsCancellationRequested:
                    if (!CatalogAttempts.CallerLeft(request))
                    {
                        replica.Strike($"no answer in {took.TotalMilliseconds:F0} ms");
                    }

                    break;
                case HttpRequestException http:
                    replica.Strike(http.HttpRequestError.ToString());
                    break;
                default:
                    replica.Strike(failure.GetType().Name);
                    break;
            }

            throw;
        }

        var answeredIn = replica.End(started);
        if ((int)response.StatusCode >= 500)
        {
            replica.Strike("answered " + (int)response.StatusCode);
        }
        else
        {
            replica.Answered();
            delay.Add(call.ServiceUri.AbsolutePath, answeredIn);
        }

        return response;
    }

    /// <summary>One call's attempts: the service's address, and the replicas tried so far.</summary>
    private sealed class Call(Uri serviceUri)
    {
        public Uri ServiceUri { get; } = serviceUri;

        public List<ReplicaSet.Replica> Tried { get; } = [];
    }
}
