using System.Net;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.ServiceDefaults.Hedging;
using HttpPerf.Tests.Infrastructure;
using Microsoft.Extensions.Http.Resilience;
using Microsoft.Extensions.Options;
using Polly;

namespace HttpPerf.Tests.Lessons;

/// <summary>
/// The hedging Frontend.Api's Catalog client and the Gateway's routes share (ServiceDefaults/Hedging/HedgingStrategy.cs):
/// an attempt whose connection cannot be opened within the handler's <c>ConnectTimeout</c> (an address that drops the
/// SYN, as a swarm task's does once it is gone) is tried again at the next replica, as a refused one is. The handler
/// reports that timeout as a cancellation, which a predicate given the outcome alone does not count as a failure: the
/// call then failed with 504 after 2 s (once in CI run 33, as Redis restarted under Podman: most likely a lookup its
/// DNS lost while it reloaded, docs/deploy.md).
/// </summary>
[Trait(Kind.Name, Kind.Lessons)]
[Lesson(Pitfalls.FrontendReplicas)]
public sealed class HedgingStrategyTests
{
    [Fact]
    public async Task An_attempt_whose_connection_times_out_is_tried_again_at_the_next_replica()
    {
        // The first replica's connection times out; the second replica answers.
        using var unreachable = Unreachable(TimeSpan.FromMilliseconds(200));
        var replicas = new TwoReplicas(unreachable);
        using var client = Hedged(replicas);

        var clock = System.Diagnostics.Stopwatch.StartNew();
        using var response = await client.GetAsync("http://catalog/api/catalog/products", Cancel);

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal(["replica-1: TaskCanceledException (TimeoutException)", "replica-2: 200"], replicas.Attempts);
        Assert.InRange(clock.Elapsed, TimeSpan.FromMilliseconds(150), TimeSpan.FromSeconds(10));
    }

    [Fact]
    public async Task A_call_its_caller_cancels_is_not_tried_again()
    {
        using var unreachable = Unreachable(Timeout.InfiniteTimeSpan);
        var replicas = new TwoReplicas(unreachable);
        using var client = Hedged(replicas);
        using var caller = CancellationTokenSource.CreateLinkedTokenSource(Cancel);
        caller.CancelAfter(TimeSpan.FromMilliseconds(200));

        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => client.GetAsync("http://catalog/api/catalog/products", caller.Token));
        Assert.StartsWith("replica-1: TaskCanceledException", Assert.Single(replicas.Attempts));
    }

    // A handler whose connections are never made (the SYN goes unanswered): its own connect timeout ends an attempt.
    private static SocketsHttpHandler Unreachable(TimeSpan connectTimeout) => new()
    {
        ConnectTimeout = connectTimeout,
        ConnectCallback = static async (_, token) =>
        {
            await Task.Delay(Timeout.Infinite, token);
            throw new InvalidOperationException("unreachable");
        },
    };

    // The hedging as the Gateway wraps YARP's client with it: every GET may go again when an attempt fails.
    private static HttpClient Hedged(HttpMessageHandler replicas)
    {
        var options = Options.Create(new TestHedgeOptions());
        var pipeline = new ResiliencePipelineBuilder<HttpResponseMessage>()
            .AddHedging(HedgingStrategy.For(new HedgeDelay<TestHedgeOptions>(options), new HedgeBudget<TestHedgeOptions>(options),
                slow: static _ => null, again: static _ => true))
            .Build();
        return new HttpClient(new ResilienceHandler(pipeline) { InnerHandler = replicas });
    }

    private sealed class TestHedgeOptions : HedgeOptions;

    /// <summary>The first attempt goes to an address that never answers, every later one to a replica that does.</summary>
    private sealed class TwoReplicas(HttpMessageHandler unreachable) : HttpMessageHandler
    {
        private readonly HttpMessageInvoker _first = new(unreachable, disposeHandler: false);
        private readonly Lock _lock = new();

        public List<string> Attempts { get; } = [];

        protected override async Task<HttpResponseMessage> SendAsync(HttpRequestMessage request, CancellationToken cancellationToken)
        {
            int attempt;
            lock (_lock)
            {
                attempt = Attempts.Count + 1;
                Attempts.Add($"replica-{attempt}");
            }

            if (attempt > 1)
            {
                Record(attempt, "200");
                return new HttpResponseMessage(HttpStatusCode.OK) { RequestMessage = request };
            }

            try
            {
                return await _first.SendAsync(request, cancellationToken);
            }
            catch (Exception failure)
            {
                Record(attempt, failure.InnerException is { } inner ? $"{failure.GetType().Name} ({inner.GetType().Name})" : failure.GetType().Name);
                throw;
            }
        }

        private void Record(int attempt, string outcome)
        {
            lock (_lock)
            {
                Attempts[attempt - 1] = $"replica-{attempt}: {outcome}";
            }
        }
    }
}
