using Microsoft.Extensions.Options;

namespace HttpPerf.ServiceDefaults.Hedging;

/// <summary>
/// A bound on the extra requests, as gRPC's retry throttling bounds retries: a bucket of at most ten hedges, each
/// call earns a fraction of one (<see cref="HedgeOptions.HedgeBudget"/>), each hedge spends one, and with less
/// than one left a slow first attempt is waited for (a failed one is still tried again elsewhere). Over a long run
/// the hedges are at most that fraction of the calls, however slow the service gets as a whole.
/// Its page: docs/pitfalls/Frontend.Replicas.md.
/// </summary>
public sealed class HedgeBudget<TOptions>(IOptions<TOptions> options)
    where TOptions : HedgeOptions
{
    private const double Capacity = 10;

    private readonly Lock _lock = new();
    private double _tokens = Capacity;

    public bool HasToken
    {
        get
        {
            lock (_lock)
            {
                return _tokens >= 1;
            }
        }
    }

    public void Earn()
    {
        lock (_lock)
        {
            _tokens = Math.Min(Capacity, _tokens + options.Value.HedgeBudget);
        }
    }

    public void Spend()
    {
        lock (_lock)
        {
            _tokens = Math.Max(0, _tokens - 1);
        }
    }
}
