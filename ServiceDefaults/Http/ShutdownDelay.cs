using HttpPerf.ServiceDefaults.Contract;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;

namespace HttpPerf.ServiceDefaults.Http;

/// <summary>
/// Told to stop (SIGTERM), a replica keeps serving for <see cref="ShutdownOptions.Delay"/> before Kestrel stops
/// accepting and drains what is in flight. An orchestrator takes a stopping task's address out of its service's name
/// first (a swarm, 2 s before the signal), but each caller sees that only at its next lookup (ReplicaAddresses: every
/// 5 s): a replica that closed at once left callers sending to an address where nothing answered any more, each such
/// call lost until the Gateway's 15 s timeout (a 504 in a rolling update, docs/deploy.md, "On a swarm"). Kubernetes
/// teams do the same with a preStop sleep. Off (zero) by default: under the AppHost and in tests a stop is immediate.
/// </summary>
internal sealed partial class ShutdownDelay(IOptions<ShutdownOptions> options, ILogger<ShutdownDelay> logger) : IHostedLifecycleService
{
    // Every IHostedLifecycleService's StoppingAsync runs before any IHostedService's StopAsync, Kestrel's among them.
    public Task StoppingAsync(CancellationToken cancellationToken)
    {
        if (options.Value.Delay <= TimeSpan.Zero)
        {
            return Task.CompletedTask;
        }

        LogServing(logger, options.Value.Delay.TotalSeconds);
        return Task.Delay(options.Value.Delay, cancellationToken);
    }

    public Task StartAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public Task StopAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public Task StartingAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public Task StartedAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public Task StoppedAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    [LoggerMessage(Level = LogLevel.Information, Message = "Stopping: serving {Seconds:F0} s more, while callers leave this replica")]
    private static partial void LogServing(ILogger logger, double seconds);

    internal static void AddTo(IServiceCollection services)
    {
        services.AddOptions<ShutdownOptions>().BindConfiguration(ShutdownOptions.Section)
            .Validate(o => o.Delay >= TimeSpan.Zero, $"{ShutdownOptions.Section}:Delay must not be negative.")
            .ValidateOnStart();
        services.AddHostedService<ShutdownDelay>();
    }
}

/// <summary>Configuration section <c>Shutdown</c>: what a replica does when it is told to stop.</summary>
public sealed class ShutdownOptions
{
    public const string Section = SystemContract.ShutdownSection;

    /// <summary>How long it keeps serving before it stops accepting (default zero: it stops at once).</summary>
    public TimeSpan Delay { get; set; }
}
