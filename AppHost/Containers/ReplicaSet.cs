namespace HttpPerf.AppHost.Containers;

/// <summary>
/// A service's row on the dashboard's Resources page in container mode, with its replicas' containers nested under it
/// (catalog: catalog-1, catalog-2): what process mode's projects show without it. Its state is theirs: Running when
/// every replica runs, "1/2 running" while some do not. It runs nothing itself; its commands (the service's flags)
/// act on every replica, as each replica's do.
/// </summary>
internal sealed class ReplicaSetResource(string name) : Resource(name);

internal static class ReplicaSet
{
    public const string ResourceType = "Replicas";

    public static IResourceBuilder<ReplicaSetResource> AddReplicaSet(this IDistributedApplicationBuilder builder, string name) =>
        builder.AddResource(new ReplicaSetResource(name))
            .WithInitialState(new CustomResourceSnapshot { ResourceType = ResourceType, State = KnownResourceStates.Starting, Properties = [] })
            .ExcludeFromManifest();

    /// <summary>Follows the state of <paramref name="replicas"/> and publishes it as the set's.</summary>
    public static IResourceBuilder<ReplicaSetResource> FollowedBy(this IResourceBuilder<ReplicaSetResource> set, IReadOnlyList<IResourceBuilder<ContainerResource>> replicas) =>
        set.OnInitializeResource((resource, initialize, cancellationToken) =>
        {
            var names = replicas.Select(r => r.Resource.Name).ToHashSet();
            _ = Task.Run(async () =>
            {
                var states = new Dictionary<string, string?>();
                await foreach (var update in initialize.Notifications.WatchAsync(cancellationToken))
                {
                    if (!names.Contains(update.Resource.Name))
                    {
                        continue;
                    }

                    states[update.Resource.Name] = update.Snapshot.State?.Text;
                    var running = states.Values.Count(s => s == KnownResourceStates.Running);
                    await initialize.Notifications.PublishUpdateAsync(resource, snapshot => snapshot with
                    {
                        State = running == names.Count
                            ? new(KnownResourceStates.Running, KnownResourceStateStyles.Success)
                            : new($"{running}/{names.Count} running", running == 0 ? KnownResourceStateStyles.Info : KnownResourceStateStyles.Warn),
                    });
                }
            }, cancellationToken);
            return Task.CompletedTask;
        });
}
