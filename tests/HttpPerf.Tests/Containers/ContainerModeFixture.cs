using Aspire.Hosting.ApplicationModel;
using Aspire.Hosting.Testing;
using Aspire.Hosting;
using Bench.Containers;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.Tests.Infrastructure;

namespace HttpPerf.Tests.Containers;

/// <summary>
/// The real AppHost in container mode (<c>-- --containers</c>, <see cref="AppHostUnderTest"/>): every service from its
/// image (built first when missing or stale, as a user's run does), two replicas each of Catalog.Api, Frontend.Api and
/// Uploads.Api, Redis for the flags. Settings of the test's own: a 2,000-product catalog (<see cref="ProductCount"/>), an
/// uploads volume of its own (removed at the end), a Redis without a data volume (the developer's flags stay
/// untouched). Where no container engine answers, <see cref="Unavailable"/> says why and the tests skip.
/// </summary>
public class ContainerModeFixture : AppHostUnderTest
{
    public const int Replicas = 2;

    public static readonly string[] Replicated = [SystemContract.Catalog, SystemContract.Frontend, SystemContract.Uploads];

    private readonly Lazy<ContainerEngine?> _engine;

    /// <summary>A start has 8 min: images built (first run: about 40 s), nine containers started and seeded on two cores.</summary>
    public ContainerModeFixture()
        : base(startTimeout: TimeSpan.FromMinutes(8), stopTimeout: TimeSpan.FromMinutes(2))
    {
        _engine = new(FindEngine);
    }

    /// <summary>
    /// The engine the AppHost runs its containers on, which the tests ask too: the machine's own
    /// (<see cref="ContainerEngine.Answering"/>: <c>ASPIRE_CONTAINER_RUNTIME</c>'s where set, else Podman where both answer).
    /// </summary>
    public ContainerEngine Engine => _engine.Value ?? throw new InvalidOperationException(Unavailable);

    public override string? Unavailable => _engine.Value is null
        ? "No container engine answers here (podman info, docker info): run eng/containers/setup.sh as root on Debian (docs/deploy.md)."
        : null;

    /// <summary>The catalog's products: 2,000 (fast to seed and to serve), or null for the AppHost's default size.</summary>
    protected virtual int? ProductCount => 2000;

    public string UploadsVolume { get; } = $"httpperf-test-uploads-{Guid.NewGuid():N}";

    /// <summary>The resources container mode makes of a replicated service: catalog-1, catalog-2.</summary>
    public static IReadOnlyList<string> ReplicasOf(string service) =>
        Replicated.Contains(service) ? [.. Enumerable.Range(1, Replicas).Select(i => $"{service}-{i}")] : [service];

    /// <summary>Every resource that runs as a container: the services' replicas, the Gateway, Redis.</summary>
    public static IReadOnlyList<string> Containers =>
        [.. SystemContract.Services.SelectMany(s => ReplicasOf(s.Name)), SystemContract.FlagsConnectionName];

    /// <summary>The engine's id of each running container, by resource, read from the resources' snapshots.</summary>
    public Dictionary<string, string> ContainerIds { get; } = [];

    /// <summary>The engine to run on, asked once; null where it does not answer.</summary>
    protected virtual ContainerEngine? FindEngine() => ContainerEngine.Answering;

    protected override IEnumerable<string> Settings =>
    [
        "--AppHost:Containers=true",
        $"--Parameters:replicas={Replicas}",
        $"--Containers:UploadsVolume={UploadsVolume}",
    ];

    protected override IReadOnlyList<string> AwaitedHealthy => Containers;

    protected override void Configure(IDistributedApplicationTestingBuilder builder)
    {
        foreach (var catalog in ProductCount is null ? [] : ReplicasOf(SystemContract.Catalog))
        {
            builder.CreateResourceBuilder<ContainerResource>(catalog).WithEnvironment(SystemContract.CatalogProductCount, ProductCount.ToString());
        }

        // Redis's data volume holds the developer's flags between runs of container mode: not the tests'.
        var redis = builder.Resources.Single(r => r.Name == SystemContract.FlagsConnectionName);
        foreach (var mount in redis.Annotations.OfType<ContainerMountAnnotation>().ToList())
        {
            redis.Annotations.Remove(mount);
        }
    }

    protected override void OnStarted(IReadOnlyList<ResourceEvent> healthy)
    {
        foreach (var (resource, id) in Property(healthy, "container.id"))
        {
            ContainerIds[resource] = id.ToString()!;
        }
    }

    /// <summary>
    /// A client of one replica's own published port, past the Gateway, with connections of its own (disposed with it).
    /// Not the factory's pooled handler (App.CreateHttpClient): a fault test restarts replicas, and a pooled connection
    /// to a container gone sends its next request into an address that drops it (the Redis test waited 100 s so).
    /// </summary>
    public HttpClient Replica(string resource) => new(new SocketsHttpHandler()) { BaseAddress = App.GetEndpoint(resource, "http") };

    protected override void OnStopped()
    {
        if (Unavailable is null)
        {
            try
            {
                Engine.Run("volume", "rm", "--force", UploadsVolume);
            }
            catch (InvalidOperationException)
            {
                // Best effort: a test volume, named by a fresh guid.
            }
        }
    }
}
