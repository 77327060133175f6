#pragma warning disable ASPIREPIPELINES001 // Aspire 13's publishing pipeline is marked experimental.
using System.Globalization;
using System.Text;
using Aspire.Hosting.Pipelines;
using HttpPerf.AppHost.Containers;
using HttpPerf.ServiceDefaults;
using HttpPerf.ServiceDefaults.Contract;
using YamlDotNet.Serialization;

namespace HttpPerf.AppHost.Swarm;

/// <summary>One pass over the model: each project and container a swarm service, with what <see cref="SwarmStack"/> lists.</summary>
internal sealed class StackWriter(PipelineStepContext context, ContainerSettings settings, string repositoryRoot)
{
    // The services' images, built by eng/swarm/swarm.sh with the SDK (dotnet publish -t:PublishContainer) into a registry every node reaches.
    private static string ProjectImage(string name) => "${HTTPPERF_REGISTRY:?the registry the nodes pull from (eng/swarm/swarm.sh sets it)}/httpperf/" + name + ":${HTTPPERF_TAG:-latest}";

    private readonly Dictionary<(string Resource, string Endpoint), EndpointAnnotation> _endpoints = [];
    private readonly SortedDictionary<string, string> _secrets = new(StringComparer.Ordinal);
    private readonly SortedSet<string> _parameters = new(StringComparer.Ordinal);

    public async Task<(string Yaml, string Secrets)> WriteAsync()
    {
        var resources = context.Model.Resources.Where(r => r is ProjectResource or ContainerResource).ToList();
        foreach (var resource in resources)
        {
            foreach (var endpoint in resource.Annotations.OfType<EndpointAnnotation>())
            {
                _endpoints[(resource.Name, endpoint.Name)] = endpoint;
            }
        }

        var services = new Dictionary<string, object>();
        var volumes = new Dictionary<string, object>();
        foreach (var resource in resources)
        {
            services[resource.Name] = await ServiceAsync(resource, volumes);
        }

        services[SwarmStack.Dashboard] = DashboardService();
        var stack = new Dictionary<string, object>
        {
            ["version"] = "3.9",
            ["services"] = services,
            ["volumes"] = volumes,
            ["secrets"] = _secrets.Keys.ToDictionary(name => name, name => (object)new Dictionary<string, object> { ["external"] = true, ["name"] = SecretName(name) }),
        };

        var yaml = new SerializerBuilder().WithQuotingNecessaryStrings().Build().Serialize(stack);
        return (Header() + yaml, SecretsHeader() + string.Concat(_secrets.Select(s => $"{SecretName(s.Key)}={s.Value}\n")));
    }

    /// <summary>The swarm secret that holds the variable <paramref name="variable"/>: eng/swarm/swarm.sh creates it from <see cref="SwarmStack.SecretsFile"/>.</summary>
    public static string SecretName(string variable) => $"httpperf-{variable}";

    private async Task<Dictionary<string, object>> ServiceAsync(IResource resource, Dictionary<string, object> volumes)
    {
        var service = new Dictionary<string, object>();
        var project = resource as ProjectResource;
        service["image"] = project is not null
            ? ProjectImage(resource.Name)
            : $"${{{Variable(resource.Name + "_IMAGE")}:-{Escape(resource.TryGetContainerImageName(out var image) ? image : throw new InvalidOperationException($"{resource.Name} has no image."))}}}";

        var environment = new Dictionary<string, object>();
        var secrets = new List<string>();
        foreach (var (name, raw) in await RawEnvironmentAsync(resource))
        {
            if (IsHttpsEndpoint(raw))
            {
                continue; // No TLS inside the stack: the https endpoints are process mode's (as Aspire's Compose publisher drops them).
            }

            var value = await EvaluateAsync(raw);
            if (value.Secret)
            {
                _secrets[name] = _secrets.TryGetValue(name, out var other) && other != value.Raw
                    ? throw new InvalidOperationException($"{name} holds two different secrets; a swarm secret is one file.")
                    : value.Raw;
                secrets.Add(name);
            }
            else
            {
                environment[name] = value.Stack;
            }
        }

        var args = await ArgsAsync(resource);
        if (project is not null)
        {
            foreach (var (name, value) in settings.Environment)
            {
                environment[name] = Escape(value);
            }

            // Every replica's telemetry to the dashboard, as service.name with the node and slot as its instance.
            if (resource.HasAnnotationOfType<OtlpExporterAnnotation>())
            {
                environment["OTEL_EXPORTER_OTLP_ENDPOINT"] = $"http://{SwarmStack.Dashboard}:{SwarmStack.DashboardOtlpPort}";
                environment["OTEL_EXPORTER_OTLP_PROTOCOL"] = "grpc";
                environment["OTEL_SERVICE_NAME"] = resource.Name;
                environment["OTEL_RESOURCE_ATTRIBUTES"] = "service.instance.id={{.Node.Hostname}}-{{.Task.Slot}}";
                environment["OTEL_METRIC_EXPORT_INTERVAL"] = ServiceResourceExtensions.Milliseconds(SwarmStack.MetricExportInterval);
                environment["OTEL_EXPORTER_OTLP_TIMEOUT"] = ServiceResourceExtensions.Milliseconds(ServiceResourceExtensions.ExportTimeout);
            }

            // Code an idle replica runs rarely is compiled at tier 1 in its first minutes, not a method at a time at rest.
            environment[SwarmStack.CallCountThresholdVariable] = SwarmStack.CallCountThreshold;
            // The service's name answers with every replica's address (dnsrr): each caller takes each as its own endpoint.
            environment["ServiceDiscovery__ReplicaAddresses__Expand"] = "true";
            // Told to stop, a replica serves on until its callers have looked its name up again without it.
            environment[SystemContract.ShutdownDelay] = SwarmStack.ShutdownDelay.ToString("c", CultureInfo.InvariantCulture);
            // Then drains what is in flight, for up to the host's bound on a stop, within the swarm's grace before it kills.
            environment[SystemContract.HostShutdownTimeoutSeconds] = SwarmStack.ShutdownTimeout.TotalSeconds.ToString(CultureInfo.InvariantCulture);
            service["stop_grace_period"] = $"{SwarmStack.StopGracePeriod.TotalSeconds}s";
            if (args.Count > 0)
            {
                service["command"] = args;
            }
        }
        else if (resource is ContainerResource container)
        {
            // A container reads its secrets as the variables it expects: its entrypoint, run by a shell that sets them from the files first.
            List<string> entrypoint = container.Entrypoint is { } own ? [own] : [];
            if (secrets.Count > 0)
            {
                entrypoint = ReadingSecrets(secrets, entrypoint);
            }

            if (entrypoint.Count > 0)
            {
                service["entrypoint"] = entrypoint;
            }

            if (args.Count > 0)
            {
                service["command"] = args;
            }
        }

        service["environment"] = environment;
        if (secrets.Count > 0)
        {
            service["secrets"] = secrets.Select(s => (object)new Dictionary<string, object> { ["source"] = s, ["target"] = s }).ToList();
        }

        if (resource.TryGetContainerMounts(out var mounts))
        {
            service["volumes"] = mounts.Select(m => $"{m.Source}:{m.Target}{(m.IsReadOnly ? ":ro" : "")}").ToList<object>();
            foreach (var mount in mounts.Where(m => m.Type == ContainerMountType.Volume))
            {
                volumes[mount.Source!] = SharedVolume(mount.Source!);
            }
        }

        var published = resource.Annotations.OfType<EndpointAnnotation>().Where(e => e.IsExternal && e.UriScheme == "http").ToList();
        if (published.Count > 0)
        {
            // Published on each node itself: the routing mesh needs IPVS, which these hosts lack, and many hosts lack.
            service["ports"] = published.Select(e => (object)new Dictionary<string, object>
            {
                ["target"] = TargetPort(e),
                ["published"] = e.Port ?? TargetPort(e),
                ["protocol"] = "tcp",
                ["mode"] = "host",
            }).ToList();
        }

        // No `healthcheck:`. Docker runs each check as an exec in the task (its runc in the node, a runc init and the
        // command in the task): 75 ms of CPU a check, 3.4% of a core for nine tasks every 20 s, most of what the swarm
        // cost at rest. What a check gave is had otherwise: a task that is not yet listening refuses at once, and its
        // callers' hedges take the next replica; one that stops answering is left by the Gateway's probes and hedges
        // (docs/deploy.md, "On a swarm": "no `healthcheck:`").
        service["deploy"] = Deploy(resource, published.Count > 0);
        return service;
    }

    private Dictionary<string, object> Deploy(IResource resource, bool published)
    {
        var deploy = new Dictionary<string, object>();
        if (published)
        {
            // A port on the node holds one task of the service a node: one on every node.
            deploy["mode"] = "global";
        }
        else
        {
            deploy["replicas"] = resource.HasAnnotationOfType<ExplicitStartupAnnotation>() ? 0
                : resource.TryGetLastAnnotation<ReplicasParameterAnnotation>(out var replicas) ? $"${{{Parameter(replicas.Parameter.Name)}:-{resource.GetReplicaCount()}}}"
                : resource.GetReplicaCount();
        }

        if (resource is ProjectResource project)
        {
            // Which project the image is built from (eng/swarm/swarm.sh reads it), relative to the repository.
            deploy["labels"] = new Dictionary<string, object> { [ProjectLabel] = Path.GetRelativePath(repositoryRoot, project.GetProjectMetadata().ProjectPath) };
        }

        deploy["endpoint_mode"] = "dnsrr";
        if (settings.Limits.TryGetValue(resource.Name, out var limits) && (limits.MemoryMiB > 0 || limits.Cpus > 0))
        {
            var limit = new Dictionary<string, object>();
            if (limits.Cpus > 0)
            {
                limit["cpus"] = limits.Cpus.ToString(CultureInfo.InvariantCulture);
            }

            if (limits.MemoryMiB > 0)
            {
                // Container mode's limit (Containers:Limits), which a swarm's operator may size to its nodes: the GC heap and
                // the memory budget are shares of it (docs/memory.md).
                limit["memory"] = $"${{{Variable(resource.Name)}{MemoryVariableSuffix}:-{limits.MemoryMiB}M}}";
            }

            deploy["resources"] = new Dictionary<string, object> { ["limits"] = limit };
        }

        // One task at a time; a new one started before its old one stops, where no port on the node is held.
        deploy["update_config"] = new Dictionary<string, object>
        {
            ["parallelism"] = 1,
            ["delay"] = "5s",
            ["order"] = published ? "stop-first" : "start-first",
            ["failure_action"] = "rollback",
        };
        return deploy;
    }

    /// <summary>A shell that sets each of <paramref name="secrets"/> as a variable from its file, then runs <paramref name="entrypoint"/>.</summary>
    private static List<string> ReadingSecrets(IEnumerable<string> secrets, List<string> entrypoint) =>
    [
        "/bin/sh", "-c",
        string.Concat(secrets.Select(s => $"export {s}=\"$$(cat {SystemContract.SecretsDirectory}/{s})\"; ")) + "exec \"$$0\" \"$$@\"",
        .. entrypoint,
    ];

    /// <summary>
    /// The Aspire dashboard as a service (as Aspire's Compose publisher adds one): its pages on the node's port, OTLP
    /// over gRPC on the stack's network alone; its login token in its log (<c>docker service logs httpperf_dashboard</c>);
    /// its telemetry API (<c>/api/telemetry/spans</c>) behind a key, a swarm secret as every other.
    /// </summary>
    private Dictionary<string, object> DashboardService()
    {
        const string ApiKey = "Dashboard__Api__PrimaryApiKey";
        _secrets[ApiKey] = "${DASHBOARD_API_KEY}";
        return new()
        {
            ["image"] = "${DASHBOARD_IMAGE:?the Aspire dashboard image (eng/swarm/swarm.sh builds it from the dashboard package)}",
            ["entrypoint"] = ReadingSecrets([ApiKey], ["/app/Aspire.Dashboard"]),
            ["environment"] = new Dictionary<string, object>
            {
                ["ASPNETCORE_URLS"] = $"http://+:{SwarmStack.DashboardPort}",
                ["DOTNET_DASHBOARD_OTLP_ENDPOINT_URL"] = $"http://+:{SwarmStack.DashboardOtlpPort}",
                ["Dashboard__Otlp__AuthMode"] = "Unsecured",
                ["Dashboard__Frontend__AuthMode"] = "BrowserToken",
                ["Dashboard__Api__Enabled"] = "true",
                ["Dashboard__Api__AuthMode"] = "ApiKey",
                [SwarmStack.CallCountThresholdVariable] = SwarmStack.CallCountThreshold,
            },
            ["secrets"] = new List<object> { new Dictionary<string, object> { ["source"] = ApiKey, ["target"] = ApiKey } },
            ["ports"] = new List<object>
            {
                new Dictionary<string, object> { ["target"] = SwarmStack.DashboardPort, ["published"] = SwarmStack.DashboardPort, ["protocol"] = "tcp", ["mode"] = "host" },
            },
            ["deploy"] = new Dictionary<string, object>
            {
                ["replicas"] = 1,
                ["endpoint_mode"] = "dnsrr",
                ["resources"] = new Dictionary<string, object> { ["limits"] = new Dictionary<string, object> { ["memory"] = "512M" } },
            },
        };
    }

    /// <summary>
    /// A volume every node shares, so a task moved to another node finds its data: local volumes with the mount's
    /// options from the shell, a bind of one host directory on this one-machine swarm, NFS (or the like) on a real one.
    /// </summary>
    private Dictionary<string, object> SharedVolume(string name)
    {
        var prefix = Variable(name);
        return new Dictionary<string, object>
        {
            ["driver"] = "local",
            ["driver_opts"] = new Dictionary<string, object>
            {
                ["type"] = $"${{{prefix}_TYPE:-none}}",
                ["o"] = $"${{{prefix}_OPTIONS:-bind}}",
                // No "-" in the message: docker stack deploy reads ${A:?x-y} as ${A...x} with the default "y".
                ["device"] = $"${{{prefix}_DEVICE:?a directory every node shares for the volume {prefix}}}",
            },
        };
    }

    private async Task<Dictionary<string, object>> RawEnvironmentAsync(IResource resource)
    {
        var raw = new Dictionary<string, object>();
        if (resource.TryGetAnnotationsOfType<EnvironmentCallbackAnnotation>(out var callbacks))
        {
            var environment = new EnvironmentCallbackContext(context.ExecutionContext, resource, raw, context.CancellationToken);
            foreach (var callback in callbacks)
            {
                await callback.Callback(environment);
            }
        }

        return raw;
    }

    private async Task<List<object>> ArgsAsync(IResource resource)
    {
        var raw = new List<object>();
        if (resource.TryGetAnnotationsOfType<CommandLineArgsCallbackAnnotation>(out var callbacks))
        {
            var args = new CommandLineArgsCallbackContext(raw, resource, context.CancellationToken) { ExecutionContext = context.ExecutionContext };
            foreach (var callback in callbacks)
            {
                await callback.Callback(args);
            }
        }

        var values = new List<object>();
        foreach (var arg in raw)
        {
            var value = await EvaluateAsync(arg);
            values.Add(value.Secret ? throw new InvalidOperationException($"{resource.Name}: a secret in an argument cannot be a swarm secret.") : value.Stack);
        }

        return values;
    }

    private bool IsHttpsEndpoint(object value) => value switch
    {
        EndpointReference e => e.EndpointName == "https",
        EndpointReferenceExpression x => x.Endpoint.EndpointName == "https",
        _ => false,
    };

    /// <summary>A value as the stack file writes it, and as its secret holds it: parameters as the shell's variables.</summary>
    private async Task<Value> EvaluateAsync(object? value)
    {
        switch (value)
        {
            case null:
                return Value.Literal("");
            case string text:
                return Value.Literal(text);
            case ParameterResource parameter:
                return Parameter(parameter);
            case ConnectionStringReference reference:
                return await EvaluateAsync(reference.Resource.ConnectionStringExpression);
            case IResourceWithConnectionString resource:
                return await EvaluateAsync(resource.ConnectionStringExpression);
            case EndpointReference endpoint:
                return Value.Literal(Url(endpoint));
            case EndpointReferenceExpression expression:
                var target = _endpoints[(expression.Endpoint.Resource.Name, expression.Endpoint.EndpointName)];
                return Value.Literal(expression.Property switch
                {
                    EndpointProperty.Url => Url(expression.Endpoint),
                    EndpointProperty.Host or EndpointProperty.IPV4Host => expression.Endpoint.Resource.Name,
                    EndpointProperty.Port or EndpointProperty.TargetPort => TargetPort(target).ToString(CultureInfo.InvariantCulture),
                    EndpointProperty.HostAndPort => $"{expression.Endpoint.Resource.Name}:{TargetPort(target)}",
                    EndpointProperty.Scheme => target.UriScheme,
                    _ => throw new NotSupportedException($"Endpoint property {expression.Property}"),
                });
            case ReferenceExpression { IsConditional: true } conditional:
                var condition = await conditional.Condition!.GetValueAsync(context.CancellationToken);
                return await EvaluateAsync(string.Equals(condition, conditional.MatchValue, StringComparison.OrdinalIgnoreCase) ? conditional.WhenTrue : conditional.WhenFalse);
            case ReferenceExpression expression:
                var parts = new List<Value>();
                foreach (var provider in expression.ValueProviders)
                {
                    parts.Add(await EvaluateAsync(provider));
                }

                return new Value(
                    string.Format(CultureInfo.InvariantCulture, Escape(expression.Format), [.. parts.Select(p => p.Stack)]),
                    string.Format(CultureInfo.InvariantCulture, expression.Format, [.. parts.Select(p => p.Raw)]),
                    parts.Any(p => p.Secret));
            // A value made from one parameter (Redis's password, URI-encoded): the parameter. eng/swarm/swarm.sh
            // generates letters and digits, which encoding leaves as they are.
            case IValueWithReferences derived when derived.References.OfType<ParameterResource>().ToList() is [var parameter]:
                return Parameter(parameter);
            default:
                throw new NotSupportedException($"A value of type {value.GetType()} has no place in the stack file.");
        }
    }

    /// <summary>The deploy label that names the project a service's image is built from, relative to the repository.</summary>
    public const string ProjectLabel = "org.httpperf.project";

    /// <summary>A non-secret parameter's variable, listed in the header.</summary>
    private string Parameter(string name)
    {
        var variable = Variable(name);
        _parameters.Add(variable);
        return variable;
    }

    private Value Parameter(ParameterResource parameter)
    {
        var variable = Variable(parameter.Name);
        if (parameter.Secret)
        {
            return new Value("", $"${{{variable}}}", Secret: true);
        }

        Parameter(parameter.Name);
        var fallback = parameter.Default?.GetDefaultValue();
        return new Value(fallback is null ? $"${{{variable}}}" : $"${{{variable}:-{Escape(fallback)}}}", $"${{{variable}}}", Secret: false);
    }

    private string Url(EndpointReference endpoint)
    {
        var target = _endpoints[(endpoint.Resource.Name, endpoint.EndpointName)];
        return $"{target.UriScheme}://{endpoint.Resource.Name}:{TargetPort(target)}";
    }

    /// <summary>A project's HTTP endpoint with no port of its own is the image's 8080 (<c>ASPNETCORE_HTTP_PORTS</c>).</summary>
    private static int TargetPort(EndpointAnnotation endpoint) => endpoint.TargetPort ?? Service.ContainerPort;

    /// <summary><c>CATALOG_MEMORY</c> and so on: each limited service's memory limit, as a variable of the shell.</summary>
    public const string MemoryVariableSuffix = "_MEMORY";

    private static string Variable(string name) => name.Replace('-', '_').Replace('.', '_').ToUpperInvariant();

    /// <summary>A literal <c>$</c> in a stack file is written <c>$$</c>: <c>docker stack deploy</c> reads <c>${NAME}</c> as the shell's variable.</summary>
    private static string Escape(string text) => text.Replace("$", "$$", StringComparison.Ordinal);

    private string Header() =>
        $"""
        # The system as a Docker swarm stack, written by `aspire publish -o deploy/swarm` from AppHost/AppHost.cs (AppHost/Swarm):
        # edit the AppHost, not this file. eng/swarm/swarm.sh deploys it on a swarm of Docker-in-Docker nodes on this
        # machine; on a real swarm, `docker stack deploy -c stack.yml httpperf` with these set in the shell
        # (docs/deploy.md, "On a swarm"):
        #   HTTPPERF_REGISTRY, HTTPPERF_TAG  where the services' images are (dotnet publish -t:PublishContainer)
        #   DASHBOARD_IMAGE, FLAGS_IMAGE     the Aspire dashboard's image, and Redis's if not Docker Hub's
        #   <VOLUME>_DEVICE (_TYPE, _OPTIONS) each shared volume's directory on every node (or its NFS export)
        #   {string.Join(", ", _parameters)}  the AppHost's parameters, if not their defaults
        #   <SERVICE>{MemoryVariableSuffix}   a service's memory limit per replica, if not container mode's (Containers:Limits)
        # and the swarm secrets {SwarmStack.SecretsFile} lists, made first.

        """;

    private static string SecretsHeader() =>
        """
        # The swarm secrets the stack reads, each a variable of a service made a file in /run/secrets (docs/deploy.md):
        # <secret>=<its value, the AppHost's secret parameters as ${NAME}>. eng/swarm/swarm.sh creates them.

        """;

    private sealed record Value(string Stack, string Raw, bool Secret)
    {
        public static Value Literal(string text) => new(Escape(text), text, false);
    }
}

/// <summary>Published, the service runs as many replicas as <paramref name="Parameter"/> says (its default, <c>ReplicaAnnotation</c>'s count).</summary>
internal sealed record ReplicasParameterAnnotation(ParameterResource Parameter) : IResourceAnnotation;
