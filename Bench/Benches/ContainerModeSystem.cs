using System.Diagnostics;
using System.Net.Http.Json;
using System.Security.Cryptography;
using System.Text.RegularExpressions;
using Bench.Containers;
using HttpPerf.ServiceDefaults.Contract;

namespace Bench.Benches;

/// <summary>
/// The AppHost in container mode, as every bench that measures it starts it (<c>--as-run</c>'s containers phase,
/// <c>--memory</c> and its soak, <c>--memory --gc</c>): by the README's command (<see cref="AppHostProcess"/>) with an
/// admin key of the bench's own and every flag optimized, then its containers found: the engine that runs them and each
/// service's containers by name. A client of the Gateway, and one of its admin API that sets the flags.
/// </summary>
internal sealed class ContainerModeSystem : IAsyncDisposable
{
    /// <summary>The services whose containers are found, in the order the memory reports list them (docs/results/memory).</summary>
    private static readonly string[] Services = [SystemContract.Frontend, SystemContract.Catalog, SystemContract.Gateway, SystemContract.Uploads];

    private readonly AppHostProcess _apphost;

    private ContainerModeSystem(AppHostProcess apphost, string adminKey, ContainerEngine engine, IReadOnlyDictionary<string, IReadOnlyList<string>> containers)
    {
        _apphost = apphost;
        Admin.DefaultRequestHeaders.Add(SystemContract.AdminKeyHeader, adminKey);
        Engine = engine;
        Containers = containers;
    }

    public HttpClient Gateway { get; } = new() { BaseAddress = AppHostProcess.Gateway, Timeout = TimeSpan.FromMinutes(5) };

    public HttpClient Admin { get; } = new() { BaseAddress = AppHostProcess.Gateway };

    public ContainerEngine Engine { get; }

    /// <summary>Each service's containers, by the names the AppHost gives them: <c>catalog-1</c>, <c>catalog-2</c>, or <c>gateway-abcdefgh</c> for one replica.</summary>
    public IReadOnlyDictionary<string, IReadOnlyList<string>> Containers { get; }

    /// <summary>Starts it with the AppHost's <paramref name="settings"/> besides the key, every flag optimized.</summary>
    public static async Task<ContainerModeSystem> StartAsync(string configuration, IEnumerable<string> settings, CancellationToken cancellationToken)
    {
        var adminKey = Convert.ToHexStringLower(RandomNumberGenerator.GetBytes(24));
        var apphost = await AppHostProcess.StartAsync(containers: true, configuration, [$"--Parameters:{SystemContract.AdminKeyParameter}={adminKey}", .. settings], cancellationToken);
        try
        {
            var (engine, containers) = await FindContainersAsync(cancellationToken);
            var system = new ContainerModeSystem(apphost, adminKey, engine, containers);
            await system.SetFlagsAsync(flag: null, PerfMode.Optimized, cancellationToken);
            return system;
        }
        catch
        {
            await apphost.DisposeAsync();
            throw;
        }
    }

    /// <summary>Every flag optimized, then <paramref name="flag"/> at <paramref name="rung"/>, through the Gateway's admin API; waits until it is served.</summary>
    public async Task SetFlagsAsync(string? flag, string rung, CancellationToken cancellationToken)
    {
        (await Admin.PutAsJsonAsync("/admin/flags/", PerfMode.Optimized, cancellationToken)).EnsureSuccessStatusCode();
        if (flag is not null)
        {
            (await Admin.PutAsJsonAsync($"/admin/flags/{flag}", rung, cancellationToken)).EnsureSuccessStatusCode();
        }

        var clock = Stopwatch.StartNew();
        while (clock.Elapsed < TimeSpan.FromSeconds(10))
        {
            var flags = await Admin.GetFromJsonAsync<List<FlagRow>>("/admin/flags/", cancellationToken);
            if (flags!.All(f => f.Serving == (f.Flag == flag ? rung : PerfMode.Optimized)))
            {
                break;
            }

            await Task.Delay(200, cancellationToken);
        }

        // Every replica takes a flip within a second (Redis): the one the admin API asked is one of them.
        await Task.Delay(TimeSpan.FromSeconds(1.5), cancellationToken);
    }

    public async ValueTask DisposeAsync()
    {
        Gateway.Dispose();
        Admin.Dispose();
        await _apphost.DisposeAsync();
    }

    /// <summary>The engine that runs the system's Gateway (of <see cref="ContainerEngine.Candidates"/>), and each service's containers on it.</summary>
    private static async Task<(ContainerEngine Engine, IReadOnlyDictionary<string, IReadOnlyList<string>> Containers)> FindContainersAsync(CancellationToken cancellationToken)
    {
        foreach (var program in ContainerEngine.Candidates())
        {
            var engine = new ContainerEngine(program);
            IReadOnlyList<string> running;
            try
            {
                running = await engine.ContainerNamesAsync(cancellationToken);
            }
            catch (InvalidOperationException)
            {
                // Not installed, or its daemon does not answer.
                continue;
            }

            var containers = Services.ToDictionary(
                service => service,
                service => (IReadOnlyList<string>)[.. running.Where(name => Regex.IsMatch(name, $"^{service}(-[0-9]+|-[a-z]{{8}})?$")).Order(StringComparer.Ordinal)]);
            if (containers[SystemContract.Gateway].Count > 0)
            {
                return (engine, containers);
            }
        }

        throw new InvalidOperationException($"No container engine ({string.Join(", ", ContainerEngine.Candidates())}) runs the AppHost's {SystemContract.Gateway} container: is the AppHost in container mode?");
    }

    private sealed record FlagRow(string Flag, string? Serving);
}
