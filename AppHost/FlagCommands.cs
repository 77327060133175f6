using System.Net.Http.Json;
using HttpPerf.ServiceDefaults.Flags;

/// <summary>
/// Dashboard buttons that switch pitfall flags. They go through the Gateway's admin API (with the admin
/// key parameter), so there is one writer of the flags file, and every change is logged and counted
/// the same way whichever way it was made.
/// </summary>
internal static class FlagCommands
{
    /// <summary>One command per flag of <paramref name="service"/> and rung: "Catalog.Serialization: naive", "…: streaming", "…: optimized".</summary>
    public static IResourceBuilder<ProjectResource> WithFlagCommands(
        this IResourceBuilder<ProjectResource> service, IResourceBuilder<ProjectResource> gateway, IResourceBuilder<ParameterResource> adminKey)
    {
        foreach (var pitfall in Pitfalls.All.Where(p => p.Service == service.Resource.Name))
        {
            foreach (var (variant, does) in pitfall.Variants)
            {
                service.WithCommand(
                    name: $"{pitfall.Flag}-{variant}",
                    displayName: $"{pitfall.Flag}: {variant}",
                    executeCommand: context => SetAsync(gateway, adminKey, $"/admin/flags/{pitfall.Flag}", variant, context.CancellationToken),
                    commandOptions: Options(does, variant));
            }
        }

        return service;
    }

    /// <summary>One command per variant that sets every flag of the system at once (a flag without that rung gets optimized).</summary>
    public static IResourceBuilder<ProjectResource> WithAllFlagsCommands(
        this IResourceBuilder<ProjectResource> gateway, IResourceBuilder<ParameterResource> adminKey)
    {
        foreach (var variant in PerfMode.All)
        {
            gateway.WithCommand(
                name: $"all-flags-{variant}",
                displayName: $"Every flag: {variant}",
                executeCommand: context => SetAsync(gateway, adminKey, "/admin/flags", variant, context.CancellationToken),
                commandOptions: Options($"Sets every pitfall flag of every service to {variant} (where a flag has no such rung: optimized).", variant));
        }

        return gateway;
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
        IResourceBuilder<ProjectResource> gateway, IResourceBuilder<ParameterResource> adminKey, string path, string variant, CancellationToken cancellationToken)
    {
        using var request = new HttpRequestMessage(HttpMethod.Put, path) { Content = JsonContent.Create(variant) };
        request.Headers.Add("X-Admin-Key", await adminKey.Resource.GetValueAsync(cancellationToken));
        return await ControlRequests.SendAsync(gateway.GetEndpoint("http"), "The Gateway", request, cancellationToken);
    }
}
