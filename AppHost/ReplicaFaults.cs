using HttpPerf.AppHost.Containers;
using Bench.Containers;
using Bench.LocalSystem;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.Hosting;

/// <summary>
/// Dashboard buttons that make one replica a stuck replica, each undone by itself after 60 s (docs/pitfalls/Frontend.Replicas.md):
/// <b>Freeze for 60 s</b> stops the replica (SIGSTOP and SIGCONT in process mode; the engine's <c>pause</c> and
/// <c>unpause</c> in container mode): its sockets stay open and the kernel still takes requests, and nothing answers.
/// <b>Starve for 60 s</b> leaves it a tenth of a core (a cgroup's CPU quota in process mode, which needs root; the
/// engine's <c>update --cpus 0.1</c> in container mode): it answers, slowly. A fault still on when the AppHost stops is
/// undone first, so the stop finds every process able to stop.
/// </summary>
internal static class ReplicaFaults
{
    /// <summary>Each fault's length: 60 s, or <c>AppHost:FaultSeconds</c> (the tests' shorter ones).</summary>
    public static Service WithFaultCommands(this Service service, ContainerSettings containers)
    {
        var duration = TimeSpan.FromSeconds(service.ApplicationBuilder.Configuration.GetValue("AppHost:FaultSeconds", 60));
        return service.Each(
        project =>
        {
            project.WithCommand(FreezeCommand, "Fault: freeze for 60 s", context => RunAsync(context, Freeze(context), duration), Options(Freezes));
            project.WithCommand(StarveCommand, "Fault: starve for 60 s", context => RunAsync(context, Starve(context), duration), Options(Starves));
        },
        container =>
        {
            container.WithCommand(FreezeCommand, "Fault: freeze for 60 s", context => RunAsync(context, Pause(context, containers.Engine), duration), Options(Freezes));
            container.WithCommand(StarveCommand, "Fault: starve for 60 s", context => RunAsync(context, Throttle(context, containers.Engine), duration), Options(Starves));
        });
    }

    public const string FreezeCommand = "freeze-60s";
    public const string StarveCommand = "starve-60s";

    private const string Freezes = "Stops this replica for 60 s, as a long GC pause, a deadlock or a paused VM would: its connections stay open and nothing answers. Compare the product list's p99 with Frontend.Replicas naive and optimized.";
    private const string Starves = "Leaves this replica a tenth of a core for 60 s, as a noisy neighbour or a CPU limit would: it answers, slowly.";

    private static CommandOptions Options(string description) => new()
    {
        Description = description,
        IconName = "Pause",
        UpdateState = ControlRequests.EnabledWhileRunning,
    };

    /// <summary>A fault: how to make it, and how to undo it.</summary>
    private sealed record Fault(string What, Func<Task> Make, Func<Task> Undo);

    private static async Task<ExecuteCommandResult> RunAsync(ExecuteCommandContext context, Fault? fault, TimeSpan duration)
    {
        if (fault is null)
        {
            return CommandResults.Failure($"{context.ResourceName} has no running process or container to act on.");
        }

        try
        {
            await fault.Make();
        }
        catch (Exception failure) when (failure is InvalidOperationException or IOException or UnauthorizedAccessException or System.ComponentModel.Win32Exception)
        {
            return CommandResults.Failure($"{context.ResourceName}: {fault.What} failed: {failure.Message}");
        }

        // Undone after its duration, or when the AppHost stops, whichever comes first; once.
        var stopping = context.Services.GetRequiredService<IHostApplicationLifetime>().ApplicationStopping;
        var undone = 0;
        async Task UndoOnceAsync()
        {
            if (Interlocked.Exchange(ref undone, 1) == 0)
            {
                await fault.Undo();
            }
        }

        var registration = stopping.Register(() => UndoOnceAsync().GetAwaiter().GetResult());
        _ = Task.Delay(duration, stopping).ContinueWith(async _ =>
        {
            await UndoOnceAsync();
            await registration.DisposeAsync();
        }, TaskScheduler.Default);
        return CommandResults.Success();
    }

    private static Fault? Freeze(ExecuteCommandContext context) =>
        Pid(context) is { } pid ? new Fault("SIGSTOP", () => ProcessFaults.FreezeAsync(pid), () => ProcessFaults.ThawAsync(pid)) : null;

    private static Fault? Starve(ExecuteCommandContext context)
    {
        if (Pid(context) is not { } pid)
        {
            return null;
        }

        Func<Task>? undo = null;
        return new Fault("a cgroup's CPU quota (root only)", async () => undo = await ProcessFaults.StarveAsync(pid), () => undo?.Invoke() ?? Task.CompletedTask);
    }

    private static Fault? Pause(ExecuteCommandContext context, ContainerEngine engine) =>
        Property(context, "container.id") is { } id
            ? new Fault($"{engine.Program} pause", () => engine.PauseAsync(id, CancellationToken.None), () => engine.RunAsync(["unpause", id], CancellationToken.None))
            : null;

    private static Fault? Throttle(ExecuteCommandContext context, ContainerEngine engine) =>
        Property(context, "container.id") is { } id
            ? new Fault($"{engine.Program} update --cpus 0.1", () => engine.RunAsync(["update", "--cpus", "0.1", id], CancellationToken.None), () => engine.RunAsync(["update", "--cpus", "0", id], CancellationToken.None))
            : null;

    private static int? Pid(ExecuteCommandContext context) =>
        int.TryParse(Property(context, "executable.pid"), out var pid) ? pid : null;

    private static string? Property(ExecuteCommandContext context, string name) =>
        context.Services.GetRequiredService<ResourceNotificationService>().TryGetCurrentState(context.ResourceName, out var resource)
            ? resource.Snapshot.Properties.FirstOrDefault(p => p.Name == name)?.Value?.ToString()
            : null;
}
