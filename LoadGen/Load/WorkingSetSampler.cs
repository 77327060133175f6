using LoadGen.LocalSystem;

namespace LoadGen.Load;

/// <summary>Samples each process's resident set every 50 ms while a phase runs, and keeps the peak.</summary>
public sealed class WorkingSetSampler
{
    private readonly CancellationTokenSource _stop = new();
    private readonly Dictionary<string, long> _peaks = [];
    private readonly IReadOnlyList<ServiceProcess> _services;
    private readonly Task _loop;

    public WorkingSetSampler(IEnumerable<ServiceProcess> services)
    {
        _services = services.ToList();
        _loop = SampleAsync(_stop.Token);
    }

    public async Task<IReadOnlyDictionary<string, long>> StopAsync()
    {
        await _stop.CancelAsync();
        await _loop;
        _stop.Dispose();
        return _peaks;
    }

    private async Task SampleAsync(CancellationToken cancellationToken)
    {
        using var timer = new PeriodicTimer(TimeSpan.FromMilliseconds(50));
        try
        {
            do
            {
                Sample();
            }
            while (await timer.WaitForNextTickAsync(cancellationToken));
        }
        catch (OperationCanceledException)
        {
            Sample();
        }
    }

    private void Sample()
    {
        foreach (var service in _services)
        {
            _peaks[service.Name] = Math.Max(_peaks.GetValueOrDefault(service.Name), service.WorkingSet());
        }
    }
}
