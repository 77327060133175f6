using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.ServiceDefaults;

namespace HttpPerf.AppHost.Containers;

/// <summary>
/// One service of the system as the AppHost runs it: in process mode (and when published) one project; in container
/// mode one container per replica, each from the service's image, with its own name and address (Aspire's
/// <c>WithReplicas</c> is for projects only). AppHost.cs describes every service once, through these methods,
/// whichever it is; each applies to every instance.
/// </summary>
internal sealed class Service
{
    /// <summary>The port the services listen on inside their containers (the base image's <c>ASPNETCORE_HTTP_PORTS</c>).</summary>
    public const int ContainerPort = 8080;

    private Service(string name, IResourceBuilder<ProjectResource>? project, IReadOnlyList<IResourceBuilder<ContainerResource>> containers)
    {
        Name = name;
        Project = project;
        Containers = containers;
    }

    /// <summary>The service's name in the contract (<see cref="SystemContract"/>): <c>catalog</c> for both catalog-1 and catalog-2.</summary>
    public string Name { get; }

    /// <summary>Process mode, and published: the project.</summary>
    public IResourceBuilder<ProjectResource>? Project { get; }

    /// <summary>Container mode: one container per replica.</summary>
    public IReadOnlyList<IResourceBuilder<ContainerResource>> Containers { get; }

    public IDistributedApplicationBuilder ApplicationBuilder => Project?.ApplicationBuilder ?? Containers[0].ApplicationBuilder;

    /// <summary>Every instance, as the dashboard lists them.</summary>
    public IEnumerable<IResourceBuilder<IResourceWithEndpoints>> Instances =>
        Project is not null ? [Project] : Containers.Select(c => (IResourceBuilder<IResourceWithEndpoints>)c);

    /// <summary>The first instance's endpoint: what the AppHost's own commands call (every replica serves the same API).</summary>
    public EndpointReference GetEndpoint(string name) => Project?.GetEndpoint(name) ?? Containers[0].GetEndpoint(name);

    public static Service FromProject(IResourceBuilder<ProjectResource> project) => new(project.Resource.Name, project, []);

    /// <summary>
    /// <paramref name="replicas"/> containers of <paramref name="image"/>, named <c>{name}-1</c>, <c>{name}-2</c>, ...
    /// (just <paramref name="name"/> when there is one), each with its HTTP endpoint and the dashboard's telemetry.
    /// </summary>
    public static Service FromImage(IDistributedApplicationBuilder builder, string name, ServiceImage image, int replicas, string[] runtimeArgs, bool httpEndpoint)
    {
        var containers = Enumerable.Range(1, replicas)
            .Select(i =>
            {
                var container = builder.AddContainer(replicas == 1 ? name : $"{name}-{i}", image.Repository, image.Tag)
                    .WithImageRegistry(image.Registry)
                    .WithAnnotation(new ServiceImageAnnotation(image))
                    .WithContainerRuntimeArgs(runtimeArgs)
                    .WithOtlpExporter();
                return httpEndpoint ? container.WithHttpEndpoint(targetPort: ContainerPort, name: "http") : container;
            })
            .ToList();
        return new(name, null, containers);
    }

    /// <summary>Applies <paramref name="project"/> to the project, or <paramref name="container"/> to every container.</summary>
    public Service Each(Action<IResourceBuilder<ProjectResource>> project, Action<IResourceBuilder<ContainerResource>> container)
    {
        if (Project is not null)
        {
            project(Project);
        }

        foreach (var instance in Containers)
        {
            container(instance);
        }

        return this;
    }

    public Service WithEnvironment(string name, string value) =>
        Each(p => p.WithEnvironment(name, value), c => c.WithEnvironment(name, value));

    public Service WithEnvironment(string name, IResourceBuilder<ParameterResource> value) =>
        Each(p => p.WithEnvironment(name, value), c => c.WithEnvironment(name, value));

    public Service WithHttpHealthCheck(string path) =>
        Each(p => p.WithHttpHealthCheck(path), c => c.WithHttpHealthCheck(path));

    /// <summary>
    /// Service discovery's addresses of every instance of <paramref name="called"/>
    /// (<c>services__catalog__http__0</c>, <c>__1</c>, ...): the Gateway balances across them, Refit's client asks them in turn.
    /// </summary>
    public Service WithReference(Service called)
    {
        if (Project is not null && called.Project is not null)
        {
            Project.WithReference(called.Project);
            return this;
        }

        return Each(_ => { }, container =>
        {
            for (var i = 0; i < called.Containers.Count; i++)
            {
                container.WithEnvironment(SystemContract.ServiceAddress(called.Name, i), called.Containers[i].GetEndpoint("http"));
            }
        });
    }

    /// <summary>Starts once every instance of <paramref name="other"/> is healthy.</summary>
    public Service WaitFor(Service other) => Each(
        project => { foreach (var instance in other.Instances) project.WaitFor(instance); },
        container => { foreach (var instance in other.Instances) container.WaitFor(instance); });

    /// <summary>When published or in container mode (a container's file system, not this machine's): sets <paramref name="name"/>.</summary>
    public Service WithEnvironmentInContainers(string name, string value) => Each(
        p => p.PublishWithEnvironment(name, value),
        c => c.WithEnvironment(name, value));
}
