using Microsoft.Extensions.Hosting;
using StackExchange.Redis;

namespace HttpPerf.ServiceDefaults.FlagSources;

/// <summary>Connects <see cref="RedisFlagsSource"/> in the host's first start step, before any hosted service (Kestrel included) starts.</summary>
internal sealed class RedisFlagsStartup(RedisFlagsSource source, IConnectionMultiplexer redis) : IHostedLifecycleService
{
    public Task StartingAsync(CancellationToken cancellationToken) => source.ConnectAsync(redis);

    public Task StartAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public Task StartedAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public Task StoppingAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public Task StoppedAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public Task StopAsync(CancellationToken cancellationToken) => Task.CompletedTask;
}
