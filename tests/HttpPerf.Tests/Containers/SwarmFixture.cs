using Bench.Containers;
using Bench.LocalSystem;
using HttpPerf.Tests.Infrastructure;

namespace HttpPerf.Tests.Containers;

/// <summary>
/// The system on a Docker swarm of three Docker-in-Docker nodes, brought up by the documented command
/// (<c>eng/swarm/swarm.sh up</c>) from the committed stack, and removed by its <c>down</c>. It needs root and Docker
/// Engine (eng/containers/setup.sh), as the container-mode tests do; elsewhere <see cref="Unavailable"/> says why and
/// the tests skip. The fault tests, minutes of load each, run when <see cref="Variable"/> asks for them.
/// </summary>
public sealed class SwarmFixture : IAsyncLifetime
{
    public const int Nodes = 3;

    /// <summary>The nodes' network (eng/swarm/swarm.sh): node I at .(10+I), its Gateway on port 5100.</summary>
    private const string Subnet = "172.29.231";

    private static readonly ContainerEngine Docker = new("docker", TimeSpan.FromMinutes(2));

    /// <summary>The variable that asks for the swarm's fault tests: a rolling update, a node killed, a node cut off, each under load.</summary>
    public const string Variable = "HTTPPERF_SWARM_TESTS";

    public string? Unavailable { get; } =
        Environment.UserName != "root" ? "The swarm's nodes are privileged containers: run the tests as root (CI does)."
        : !Docker.Answers() ? "Docker Engine does not answer (docker info): run eng/containers/setup.sh as root (docs/deploy.md)."
        : null;

    /// <summary>
    /// Why the fault tests skip: each holds 4 product lists a second for minutes after a minute of warm-up, near what
    /// two cores carry, 6 to 9 minutes with <c>up</c>, more than the suite's bound leaves (docs/deploy.md, "On a swarm").
    /// </summary>
    public string? FaultsUnasked { get; } =
        Environment.GetEnvironmentVariable(Variable) != "1" ? $"Set {Variable}=1 to run the swarm's fault tests: rolling updates, a node killed, a node cut off, each under 4 product lists a second (docs/deploy.md, \"On a swarm\")." : null;

    /// <summary>What <c>swarm.sh up</c> printed: the nodes, and each Gateway's and the dashboard's addresses.</summary>
    public string UpOutput { get; private set; } = "";

    public TimeSpan UpTime { get; private set; }

    public static string Node(int i) => $"httpperf-node-{i}";

    /// <summary>Node <paramref name="node"/>'s address on the nodes' network.</summary>
    public static string Address(int node) => $"{Subnet}.{10 + node}";

    public HttpClient Gateway(int node) => new() { BaseAddress = new Uri($"http://{Address(node)}:5100"), Timeout = TimeSpan.FromMinutes(2) };

    public async ValueTask InitializeAsync()
    {
        if (Unavailable is not null)
        {
            return;
        }

        await RunAsync(["down"], TimeSpan.FromMinutes(2)); // what an interrupted run left
        // Three nodes' dockerd, the images loaded into each and every service started at once fill both cores for
        // minutes: not beside the other lane's timing of a frozen replica (Lanes.TakeTurnAsync).
        using var turn = await Lanes.TakeTurnAsync(TestRun.Cancel);
        var clock = System.Diagnostics.Stopwatch.StartNew();
        UpOutput = (await RunAsync(["up", "--nodes", Nodes.ToString(System.Globalization.CultureInfo.InvariantCulture)], TimeSpan.FromMinutes(15))).EnsureSucceeded().Output;
        UpTime = clock.Elapsed;
    }

    private Task? _warming;

    /// <summary>The warm-up below, once, for the first fault test that asks.</summary>
    public Task WarmAsync() => _warming ??= WarmOnceAsync();

    /// <summary>
    /// A minute of the fault tests' own load, 4 product lists a second spread over the Gateways, none of it judged.
    /// Begun a minute after <c>up</c>, that load pushed two cores past what they carry while every replica still compiled
    /// its hot code again at tier 1, and the queues never drained (docs/deploy.md, "On a swarm"); a system in service
    /// has been warmed by its traffic.
    /// </summary>
    private async Task WarmOnceAsync()
    {
        var gateways = Enumerable.Range(1, Nodes).Select(Gateway).ToList();
        try
        {
            var load = new SteadyLoad();
            await Task.WhenAll(gateways.Prepend(gateways[0]).Select(g => load.RunAsync(g, ["/api/products"], 1, TimeSpan.FromMinutes(1), TestRun.Cancel)));
            WarmUp = load.Summary(TimeSpan.Zero);
        }
        finally
        {
            gateways.ForEach(g => g.Dispose());
        }
    }

    /// <summary>What the warm-up load met (not judged: the tests report it).</summary>
    public string WarmUp { get; private set; } = "";

    public async ValueTask DisposeAsync()
    {
        if (Unavailable is null)
        {
            await RunAsync(["down"], TimeSpan.FromMinutes(2));
        }
    }

    /// <summary><c>eng/swarm/swarm.sh</c> with <paramref name="arguments"/>, from the repository's root.</summary>
    public static Task<ProgramRun> RunAsync(string[] arguments, TimeSpan timeout) =>
        ProgramRun.RunAsync("bash", [Path.Combine(LocalSystem.RepositoryRoot(), "eng", "swarm", "swarm.sh"), .. arguments], timeout, CancellationToken.None);

    private static readonly string[] ElectionFailures = ["DeadlineExceeded", "does not have a leader"];

    /// <summary>Whether a manager's answer says the swarm is electing a leader (asked again, it answers).</summary>
    public static bool DuringElection(string failure) => ElectionFailures.Any(e => failure.Contains(e, StringComparison.Ordinal));

    /// <summary>
    /// The Docker CLI of node <paramref name="node"/>, a manager of the swarm. While a node that was cut off rejoins, the
    /// managers may elect a leader again, and a question asked then fails with "context deadline exceeded" or "The swarm
    /// does not have a leader" (both seen here): asked again for up to 30 s, as an operator would.
    /// </summary>
    public static async Task<string> InNodeAsync(int node, params string[] arguments)
    {
        var clock = System.Diagnostics.Stopwatch.StartNew();
        while (true)
        {
            var run = await Docker.TryRunAsync(["exec", Node(node), "docker", .. arguments], TestRun.Cancel);
            if (run.Succeeded || clock.Elapsed > TimeSpan.FromSeconds(30) || !DuringElection(run.Failure))
            {
                return run.EnsureSucceeded().Output.Trim();
            }

            await Task.Delay(TimeSpan.FromSeconds(2), TestRun.Cancel);
        }
    }

    /// <summary>The running tasks of <paramref name="service"/> (catalog, frontend, ...): the node each is on, and its container there.</summary>
    public static async Task<IReadOnlyList<(int Node, string Container)>> TasksAsync(int manager, string service)
    {
        var tasks = new List<(int, string)>();
        foreach (var line in (await InNodeAsync(manager, "service", "ps", $"httpperf_{service}", "--filter", "desired-state=running", "--format", "{{.Node}} {{.CurrentState}}"))
                     .Split('\n', StringSplitOptions.RemoveEmptyEntries).Where(l => l.Contains(" Running", StringComparison.Ordinal)).Select(l => l.Split(' ')[0]).Distinct())
        {
            var node = int.Parse(line["node-".Length..], System.Globalization.CultureInfo.InvariantCulture);
            // A node the swarm has not yet seen die still lists its tasks as running: it answers nothing.
            var listed = await Docker.TryRunAsync(["exec", Node(node), "docker", "ps", "--filter", $"label=com.docker.swarm.service.name=httpperf_{service}", "--format", "{{.ID}}"], TestRun.Cancel);
            foreach (var container in (listed.Succeeded ? listed.Output : "").Split('\n', StringSplitOptions.RemoveEmptyEntries))
            {
                tasks.Add((node, container));
            }
        }

        return tasks;
    }

    /// <summary>
    /// A GET of <paramref name="path"/> from inside a replica's own network (the node's curl, in the task's network
    /// namespace): that replica answers, whatever balances in front of it. Returns its status line and headers.
    /// </summary>
    public static async Task<string> GetFromReplicaAsync(int node, string container, string path) =>
        await Docker.RunAsync(["exec", Node(node), "sh", "-c",
            $"nsenter -n -t \"$(docker inspect -f '{{{{.State.Pid}}}}' {container})\" curl -sS -m 10 -o /dev/null -D - http://127.0.0.1:8080{path}"], TestRun.Cancel);

    public static string Kill(int node) => Docker.Run("kill", Node(node));
}
