using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.ServiceDefaults;

namespace HttpPerf.AppHost.Containers;

/// <summary>
/// One service of the system as the AppHost runs it: in process mode one project per replica (Catalog.Api runs two,
/// <c>catalog</c> and <c>catalog-2</c>, each at its own address, so Frontend.Api can choose between them; Aspire's
/// <c>WithReplicas</c> would put one DCP proxy in front of both); published, one project (with its replicas); in
/// container mode one container per replica, each from the service's image, with its own name and address.
/// AppHost.cs describes every service once, through these methods, whichever it is; each applies to every instance.
/// </summary>
internal sealed class Service
{
    /// <summary>The port the services listen on inside their containers (the base image's <c>ASPNETCORE_HTTP_PORTS</c>).</summary>
    public const int ContainerPort = 8080;

    /// <summary>The port of the services' cleartext HTTP/2 listener inside their containers (the image sets it: Directory.Build.props).</summary>
    public const int ContainerHttp2Port = 8081;

    private Service(string name, IReadOnlyList<IResourceBuilder<ProjectResource>> projects, IReadOnlyList<IResourceBuilder<ContainerResource>> containers,
        IResourceBuilder<ReplicaSetResource>? replicaSet = null)
    {
        Name = name;
        Projects = projects;
        Containers = containers;
        ReplicaSet = replicaSet;
    }

    /// <summary>The service's name in the contract (<see cref="SystemContract"/>): <c>catalog</c> for both catalog-1 and catalog-2.</summary>
    public string Name { get; }

    /// <summary>Process mode: a project per replica; published: the project.</summary>
    public IReadOnlyList<IResourceBuilder<ProjectResource>> Projects { get; }

    /// <summary>Container mode: one container per replica.</summary>
    public IReadOnlyList<IResourceBuilder<ContainerResource>> Containers { get; }

    /// <summary>Container mode, more than one replica: the service's own row, the containers nested under it.</summary>
    public IResourceBuilder<ReplicaSetResource>? ReplicaSet { get; }

    /// <summary>The names of every instance, as the dashboard lists them: "catalog-1 and catalog-2".</summary>
    public string InstanceNames
    {
        get
        {
            var names = Instances.Select(i => i.Resource.Name).ToList();
            return names.Count == 1 ? names[0] : $"{string.Join(", ", names[..^1])} and {names[^1]}";
        }
    }

    public IDistributedApplicationBuilder ApplicationBuilder => Projects.Count > 0 ? Projects[0].ApplicationBuilder : Containers[0].ApplicationBuilder;

    /// <summary>Every instance, as the dashboard lists them.</summary>
    public IEnumerable<IResourceBuilder<IResourceWithEndpoints>> Instances =>
        Projects.Count > 0 ? Projects : Containers.Select(c => (IResourceBuilder<IResourceWithEndpoints>)c);

    /// <summary>The first instance's endpoint: what the AppHost's own commands call (every replica serves the same API).</summary>
    public EndpointReference GetEndpoint(string name) => Projects.Count > 0 ? Projects[0].GetEndpoint(name) : Containers[0].GetEndpoint(name);

    /// <summary>
    /// The service as projects: <paramref name="name"/>, then <c>{name}-2</c>, ... Each later replica starts once the
    /// first is healthy (a Catalog seeds its SQLite file at first start; the others find it there) and reports its
    /// telemetry as the service's, so the dashboard's charts of <paramref name="name"/> hold every replica, under an
    /// instance name that is its own resource's.
    /// </summary>
    public static Service FromProjects(string name, int replicas, Func<string, IResourceBuilder<ProjectResource>> add)
    {
        var first = add(name);
        var projects = new List<IResourceBuilder<ProjectResource>> { first };
        for (var i = 2; i <= replicas; i++)
        {
            // Its instance id after Aspire's own (the last value set wins) is "{i}-{suffix}": the dashboard names an
            // instance "{service.name}-{instance id}", so this one reads "catalog-2-abcd", its resource's own name,
            // and the resource's menu finds its telemetry; Aspire's bare suffix would read "catalog-abcd".
            var instance = "service.instance.id=" + i + "-{{- index .Annotations \"otel-service-instance-id\" -}}";
            projects.Add(add($"{name}-{i}").WithEnvironment("OTEL_SERVICE_NAME", name).WithEnvironment("OTEL_RESOURCE_ATTRIBUTES", instance).WaitFor(first));
        }

        return new(name, projects, []);
    }

    /// <summary>
    /// <paramref name="replicas"/> containers of <paramref name="image"/>, named <c>{name}-1</c>, <c>{name}-2</c>, ...
    /// (just <paramref name="name"/> when there is one), each with its HTTP endpoint and the dashboard's telemetry.
    /// Replicas are one service on the dashboard, as project replicas are: they sit under a row named
    /// <paramref name="name"/> (<see cref="ReplicaSetResource"/>), and export as <c>service.name</c>
    /// <paramref name="name"/> with <c>service.instance.id</c> 1, 2, ..., so Metrics, Traces and Structured logs offer
    /// <c>catalog</c> (every replica in one chart) and <c>catalog-1</c>, <c>catalog-2</c> (the dashboard names an
    /// instance <c>{service.name}-{service.instance.id}</c>). The engine's container takes the resource's name, so that
    /// name is the instance's and a row's "View telemetry" links find it: two AppHosts in container mode on one engine
    /// at once would clash.
    /// </summary>
    public static Service FromImage(IDistributedApplicationBuilder builder, string name, ServiceImage image, int replicas, string[] runtimeArgs, bool httpEndpoint)
    {
        var replicaSet = replicas > 1 ? builder.AddReplicaSet(name) : null;
        var containers = Enumerable.Range(1, replicas)
            .Select(i =>
            {
                var container = builder.AddContainer(replicas == 1 ? name : $"{name}-{i}", image.Repository, image.Tag)
                    .WithImageRegistry(image.Registry)
                    .WithAnnotation(new ServiceImageAnnotation(image))
                    .WithContainerRuntimeArgs(runtimeArgs)
                    .WithOtlpExporter();
                if (replicaSet is not null)
                {
                    // After WithOtlpExporter: the environment's callbacks run in order, and the last value set wins.
                    var instance = $"service.instance.id={i}";
                    container.WithEnvironment("OTEL_SERVICE_NAME", name)
                        .WithEnvironment("OTEL_RESOURCE_ATTRIBUTES", instance)
                        .WithContainerName($"{name}-{i}")
                        .WithParentRelationship(replicaSet);
                }

                // The image's two listeners (Directory.Build.props): HTTP/1.1, and cleartext HTTP/2 for the Gateway.
                return httpEndpoint
                    ? container.WithHttpEndpoint(targetPort: ContainerPort, name: SystemContract.HttpEndpoint)
                        .WithUrlForEndpoint(SystemContract.HttpEndpoint, _ => new() { Url = SystemContract.HealthPath, DisplayText = ContainerExits.RowText(0, null) })
                        .WithHttpEndpoint(targetPort: ContainerHttp2Port, name: SystemContract.Http2Endpoint)
                        .WithEndpoint(SystemContract.Http2Endpoint, endpoint => endpoint.Transport = "http2")
                    : container;
            })
            .ToList();
        replicaSet?.FollowedBy(containers);
        return new(name, [], containers, replicaSet);
    }

    /// <summary>Applies <paramref name="project"/> to the project, or <paramref name="container"/> to every container.</summary>
    public Service Each(Action<IResourceBuilder<ProjectResource>> project, Action<IResourceBuilder<ContainerResource>> container)
    {
        foreach (var instance in Projects)
        {
            project(instance);
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
    /// Service discovery's addresses of every instance of <paramref name="called"/>, at each listener
    /// (<c>services__catalog__http__0</c>, <c>__1</c>, ..., and <c>services__catalog__h2__0</c>, ...): the Gateway
    /// balances across them, Frontend.Api's clients choose among them.
    /// </summary>
    public Service WithReference(Service called)
    {
        if (called.Projects.Count == 1)
        {
            return Each(project => project.WithReference(called.Projects[0]), _ => { });
        }

        var addresses = new[] { SystemContract.HttpEndpoint, SystemContract.Http2Endpoint }
            .SelectMany(name => called.Instances.Select((instance, i) => (Key: SystemContract.ServiceAddress(called.Name, i, name), Endpoint: instance.GetEndpoint(name))))
            .ToList();
        return Each(
            project => addresses.ForEach(a => project.WithEnvironment(a.Key, a.Endpoint)),
            container => addresses.ForEach(a => container.WithEnvironment(a.Key, a.Endpoint)));
    }

    /// <summary>Starts once every instance of <paramref name="other"/> is healthy.</summary>
    public Service WaitFor(Service other) => Each(
        project => { foreach (var instance in other.Instances) project.WaitFor(instance); },
        container => { foreach (var instance in other.Instances) container.WaitFor(instance); });

    /// <summary>When published only: sets <paramref name="name"/>.</summary>
    public Service PublishWithEnvironment(string name, string value) => Each(p => p.PublishWithEnvironment(name, value), _ => { });

    /// <summary>When published or in container mode (a container's file system, not this machine's): sets <paramref name="name"/>.</summary>
    public Service WithEnvironmentInContainers(string name, string value) => Each(
        p => p.PublishWithEnvironment(name, value),
        c => c.WithEnvironment(name, value));
}
