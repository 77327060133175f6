using System.Net.Http.Json;
using HttpPerf.AppHost.Containers;
using HttpPerf.ServiceDefaults.Contract;

/// <summary>
/// Dashboard buttons that switch pitfall flags. They go through the Gateway's admin API (with the admin
/// key parameter), so there is one writer of the flags file, and every change is logged and counted
/// the same way whichever way it was made.
/// </summary>
internal static class FlagCommands
{
    /// <summary>
    /// One command per flag of <paramref name="service"/> and rung: "Catalog.Serialization: naive", "…: streaming",
    /// "…: optimized", on every instance and on the service's own row in container mode (each sets the flag of every
    /// replica, and says so).
    /// </summary>
    public static Service WithFlagCommands(this Service service, Service gateway, IResourceBuilder<ParameterResource> adminKey)
    {
        service.ReplicaSet?.WithFlagCommands(service, gateway, adminKey);
        return service.Each(p => p.WithFlagCommands(service, gateway, adminKey), c => c.WithFlagCommands(service, gateway, adminKey));
    }

    private static void WithFlagCommands<T>(this IResourceBuilder<T> resource, Service service, Service gateway, IResourceBuilder<ParameterResource> adminKey)
        where T : IResource
    {
        foreach (var pitfall in Pitfalls.All.Where(p => p.Service == service.Name))
        {
            foreach (var (variant, does) in pitfall.Variants)
            {
                resource.WithCommand(
                    name: $"{pitfall.Flag}-{variant}",
                    displayName: $"{pitfall.Flag}: {variant}",
                    executeCommand: context => SetAsync(gateway, adminKey, $"/admin/flags/{pitfall.Flag}", variant, context.CancellationToken,
                        $"{pitfall.Flag} is {variant} on {service.InstanceNames}."),
                    commandOptions: Options(does, variant));
            }
        }
    }

    /// <summary>One command per variant that sets every flag of the system at once (a flag without that rung gets optimized).</summary>
    public static Service WithAllFlagsCommands(this Service gateway, IResourceBuilder<ParameterResource> adminKey) =>
        gateway.Each(p => p.WithAllFlagsCommands(gateway, adminKey), c => c.WithAllFlagsCommands(gateway, adminKey));

    private static void WithAllFlagsCommands<T>(this IResourceBuilder<T> resource, Service gateway, IResourceBuilder<ParameterResource> adminKey)
        where T : IResource
    {
        foreach (var variant in PerfMode.All)
        {
            resource.WithCommand(
                name: $"all-flags-{variant}",
                displayName: $"Every flag: {variant}",
                executeCommand: context => SetAsync(gateway, adminKey, "/admin/flags", variant, context.CancellationToken,
                    $"Every flag is {variant} (or optimized, where it has no such rung) on every replica of every service."),
                commandOptions: Options($"Sets every pitfall flag of every service to {variant} (where a flag has no such rung: optimized).", variant));
        }
    }

    private static CommandOptions Options(string description, string variant) => new()
    {
        Description = description,
        IconName = variant switch
        {
            PerfMode.Naive => "Warning",
            PerfMode.Streaming => "Flash",
            _ => "Rocket",
        },
        UpdateState = ControlRequests.EnabledWhileRunning,
    };

    private static async Task<ExecuteCommandResult> SetAsync(
        Service gateway, IResourceBuilder<ParameterResource> adminKey, string path, string variant, CancellationToken cancellationToken, string done)
    {
        using var request = new HttpRequestMessage(HttpMethod.Put, path) { Content = JsonContent.Create(variant) };
        request.Headers.Add(SystemContract.AdminKeyHeader, await adminKey.Resource.GetValueAsync(cancellationToken));
        // The Gateway's audit record of each change names where it came from (Gateway/Admin/FlagAudit.cs).
        request.Headers.Add("X-Admin-Client", "dashboard-command");
        return await ControlRequests.SendAsync(gateway.GetEndpoint("http"), "The Gateway", request, cancellationToken, onSuccess: _ => CommandResults.Success(done));
    }
}
