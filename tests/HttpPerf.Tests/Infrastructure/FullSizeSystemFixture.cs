using Bench.LocalSystem;

namespace HttpPerf.Tests.Infrastructure;

/// <summary>The whole system as real processes at the default catalog size (about 25 MB), shared by the processes lane (<see cref="SharedSystem"/>).</summary>
public sealed class FullSizeSystemFixture : SharedSystem
{
    public LocalSystem System { get; private set; } = null!;

    public HttpClient Gateway { get; private set; } = null!;

    protected override async Task StartAsync(CancellationToken cancel)
    {
        System = await LocalSystem.StartAsync(new LocalSystemOptions(), cancel);
        Gateway = new HttpClient { BaseAddress = System.Gateway.BaseAddress, Timeout = TimeSpan.FromMinutes(5) };
    }

    protected override async ValueTask StopAsync()
    {
        Gateway?.Dispose();
        if (System is not null)
        {
            await System.DisposeAsync();
        }
    }

    /// <summary>Requests inside each service's pipeline now, the <c>/runtime</c> call itself not counted.</summary>
    public async Task<Dictionary<string, long>> ActiveRequestsAsync()
    {
        var active = new Dictionary<string, long>();
        foreach (var service in System.Services)
        {
            active[service.Name] = (await service.ReadRuntimeCountersAsync(TestContext.Current.CancellationToken)).ActiveRequests - 1;
        }

        return active;
    }

    /// <summary>Waits until no service holds a request, or the time is up; returns what is still held.</summary>
    public async Task<Dictionary<string, long>> WaitIdleAsync(TimeSpan timeout)
    {
        var deadline = DateTime.UtcNow + timeout;
        while (true)
        {
            var active = await ActiveRequestsAsync();
            if (active.Values.All(n => n == 0) || DateTime.UtcNow > deadline)
            {
                return active;
            }

            await Task.Delay(100, TestContext.Current.CancellationToken);
        }
    }

    /// <summary>Every file left in any service's temp folder.</summary>
    public IReadOnlyList<string> TempFiles() =>
        System.Services.SelectMany(s => Directory.EnumerateFiles(System.TempDirectory(s.Name), "*", SearchOption.AllDirectories)).ToList();
}
