using System.Diagnostics;
using System.Globalization;
using System.Text.Json;
using Bench.Containers;
using HttpPerf.ServiceDefaults.Contract;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;

namespace HttpPerf.AppHost.Containers;

/// <summary>
/// Container mode: each time one of the system's containers dies, the resource's row says so. A replica killed for
/// passing its memory limit (exit 137) is started again by the engine in place (<c>--restart=on-failure</c>,
/// <see cref="ContainerLimits"/>), so Aspire's own state reads Running again within a second, and its exit code is
/// reset: without this, the dashboard would show nothing. Read from the engine's event stream (one process, idle until
/// a container dies), published as the resource's properties <c>container.exits</c> and <c>container.last_exit</c>
/// (its details pane, <c>aspire describe</c>), and logged once per death. docs/memory.md.
/// </summary>
internal sealed partial class ContainerExits(ContainerSettings settings, DistributedApplicationModel model, ResourceNotificationService notifications, ILogger<ContainerExits> logger)
    : BackgroundService
{
    private readonly Dictionary<string, int> _exits = [];

    private readonly ContainerEngine _engine = settings.Engine;

    protected override async Task ExecuteAsync(CancellationToken stoppingToken)
    {
        // Podman names the event "died" and writes JSON lines with --format json; Docker names it "die" and needs a template.
        string[] arguments = settings.Runtime == "podman"
            ? ["events", "--filter", "type=container", "--filter", "event=died", "--format", "json"]
            : ["events", "--filter", "type=container", "--filter", "event=die", "--format", "{{json .}}"];
        Process events;
        try
        {
            events = _engine.Start(arguments);
        }
        catch (Exception error) when (error is InvalidOperationException or System.ComponentModel.Win32Exception)
        {
            LogNoEvents(logger, settings.Runtime, error.Message);
            return;
        }

        using (events)
        using (stoppingToken.Register(() => events.Kill()))
        {
            while (await events.StandardOutput.ReadLineAsync(stoppingToken) is { } line)
            {
                if (Parse(line) is ({ } container, var exitCode, var diedAt) && Resource(container) is { } resource)
                {
                    await PublishAsync(resource, container, exitCode, diedAt, stoppingToken);
                }
            }
        }
    }

    private async Task PublishAsync(IResource resource, string container, int exitCode, DateTimeOffset diedAt, CancellationToken cancellationToken)
    {
        var exits = _exits[resource.Name] = _exits.GetValueOrDefault(resource.Name) + 1;
        var oom = await OomKilledAsync(container, cancellationToken);
        var why = exitCode == 137 ? (oom ? "killed by the kernel for passing its memory limit" : "killed (SIGKILL)") : "exited";
        var text = string.Create(CultureInfo.InvariantCulture, $"{exitCode}: {why}, at {diedAt.UtcDateTime:HH:mm:ss} UTC");
        LogExit(logger, resource.Name, exitCode, why);
        ResourcePropertySnapshot[] properties = [new("container.exits", exits), new("container.last_exit", text)];
        var row = RowText(exits, text);
        foreach (var link in resource.Annotations.OfType<ResourceUrlAnnotation>().Where(u => IsRowLink(u.Url)))
        {
            link.DisplayText = row;
        }

        await notifications.PublishUpdateAsync(resource, snapshot => snapshot with
        {
            Properties = snapshot.Properties.RemoveAll(p => properties.Any(n => n.Name == p.Name)).AddRange(properties),
            Urls = [.. snapshot.Urls.Select(u => IsRowLink(u.Url) ? u with { DisplayProperties = u.DisplayProperties with { DisplayName = row } } : u)],
        });
    }

    /// <summary>
    /// The deaths on the replica's row, where its state is read without a click, as the text of a link to its
    /// <c>/health</c> (Service.FromImage adds it): Aspire's own state reads Running again as soon as the engine has
    /// restarted it. The text lives on the link's annotation, which the AppHost reads again whenever it rebuilds the
    /// snapshot, so it outlives the updates that follow, as LoadGen's status line does. "exits: 0", then
    /// "exits: 2 · last 137: killed by the kernel for passing its memory limit, at 01:02:03 UTC"; whether the engine
    /// started it again (it does after a kill from inside, <c>--restart=on-failure</c>, not after <c>podman kill</c>) is its state.
    /// </summary>
    public static string RowText(int exits, string? lastExit) =>
        lastExit is null ? $"exits: {exits}" : string.Create(CultureInfo.InvariantCulture, $"exits: {exits} · last {lastExit}");

    private static bool IsRowLink(string url) => url.EndsWith(SystemContract.HealthPath, StringComparison.Ordinal);

    private async Task<bool> OomKilledAsync(string container, CancellationToken cancellationToken) =>
        (await _engine.TryRunAsync(["inspect", "--format", "{{.State.OOMKilled}}", container], cancellationToken)).Output.Trim() == "true";

    // A container is named after its resource: "catalog-1", or "gateway-abcdefgh" (DCP's suffix) for a single one.
    private IResource? Resource(string container) => model.Resources.OfType<ContainerResource>()
        .FirstOrDefault(r => container == r.Name || (container.StartsWith(r.Name + "-", StringComparison.Ordinal) && container.Length == r.Name.Length + 9 && container[(r.Name.Length + 1)..].All(char.IsAsciiLetterLower)));

    // Podman: {"Name":"catalog-1","ContainerExitCode":137,"Time":"2026-12-05T11:30:09.4+00:00",...}; Docker: {"Actor":{"Attributes":
    // {"name":"catalog-1","exitCode":"137"}},"timeNano":...} (Podman 5 too). The time is the engine's, of the death, not when
    // this read the line and asked the engine about the memory limit: a row that said so once read 16 s after the kill.
    private static (string? Container, int ExitCode, DateTimeOffset DiedAt) Parse(string line)
    {
        try
        {
            using var json = JsonDocument.Parse(line);
            var root = json.RootElement;
            var diedAt = DiedAt(root);
            if (root.TryGetProperty("Actor", out var actor) && actor.TryGetProperty("Attributes", out var attributes))
            {
                return (attributes.TryGetProperty("name", out var name) ? name.GetString() : null,
                    attributes.TryGetProperty("exitCode", out var code) && int.TryParse(code.GetString(), CultureInfo.InvariantCulture, out var exit) ? exit : -1,
                    diedAt);
            }

            return (root.TryGetProperty("Name", out var podmanName) ? podmanName.GetString() : null,
                root.TryGetProperty("ContainerExitCode", out var podmanCode) && podmanCode.TryGetInt32(out var podmanExit) ? podmanExit : -1,
                diedAt);
        }
        catch (JsonException)
        {
            return (null, -1, default);
        }
    }

    private static DateTimeOffset DiedAt(JsonElement root)
    {
        if (root.TryGetProperty("timeNano", out var nanoseconds) && nanoseconds.TryGetInt64(out var unixNanoseconds))
        {
            return DateTimeOffset.FromUnixTimeMilliseconds(unixNanoseconds / 1_000_000);
        }

        return root.TryGetProperty("Time", out var time) && time.ValueKind == JsonValueKind.String
            && DateTimeOffset.TryParse(time.GetString(), CultureInfo.InvariantCulture, DateTimeStyles.None, out var podmanTime)
            ? podmanTime
            : DateTimeOffset.UtcNow;
    }

    [LoggerMessage(Level = LogLevel.Warning, Message = "{Resource} exited with {ExitCode}: {Why}")]
    private static partial void LogExit(ILogger logger, string resource, int exitCode, string why);

    [LoggerMessage(Level = LogLevel.Warning, Message = "Container exits will not show on the dashboard: {Runtime} events did not start ({Error})")]
    private static partial void LogNoEvents(ILogger logger, string runtime, string error);
}
