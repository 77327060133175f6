using HttpPerf.ServiceDefaults;
using HttpPerf.ServiceDefaults.Flags;
using Microsoft.Extensions.Primitives;

namespace Gateway.Admin;

/// <summary>
/// One audit record per flag change, wherever it came from: the admin API (a dashboard command, the admin page, any
/// other caller), an edit of the flags file, or a write to Redis by anything else. The Gateway is the one auditor: it
/// watches the store (on every configuration reload, which the file watcher and Redis's change channel trigger, and
/// every 10 s besides) and compares each read with the last, so a change is recorded once, not once per service or
/// replica. A change the admin API made is announced first (<see cref="Expect"/>), so its record names the key id and
/// the caller's address; any other change is named by the store it appeared in. Category <see cref="SystemContract.AuditCategory"/>,
/// event <c>FlagChanged</c>: the dashboard's structured logs filter on either.
/// </summary>
public sealed partial class FlagAudit(IFlagStore store, IConfiguration configuration, ILoggerFactory loggers) : BackgroundService
{
    /// <summary>Where a change came from: the <c>X-Admin-Client</c> values the admin API knows, then the stores.</summary>
    public const string DashboardCommand = "dashboard-command";
    public const string AdminPage = "admin-page";
    public const string AdminApi = "admin-api";
    public const string FlagsFile = "flags-file";
    public const string Redis = "redis";

    private static readonly TimeSpan Poll = TimeSpan.FromSeconds(10);
    private static readonly TimeSpan ExpectationLifetime = TimeSpan.FromMinutes(1);

    private readonly ILogger _log = loggers.CreateLogger(SystemContract.AuditCategory);
    private readonly Dictionary<string, List<Expected>> _expected = [];
    private readonly Lock _gate = new();
    private readonly SemaphoreSlim _changed = new(0, 1);

    /// <summary>What an admin API call is about to write, and who asked: the record of each change it makes names them.</summary>
    public sealed record Expected(string Old, string Variant, string Source, string KeyId, string? ClientAddress, DateTimeOffset At);

    /// <summary>The header in which an admin API caller names itself (<see cref="DashboardCommand"/>, <see cref="AdminPage"/>).</summary>
    public const string ClientHeader = "X-Admin-Client";

    /// <summary>The client an admin API call says it is (<see cref="ClientHeader"/>); any other value is the admin API itself.</summary>
    public static string SourceOf(string? client) => client is DashboardCommand or AdminPage ? client : AdminApi;

    /// <summary><paramref name="before"/>: the store as the admin API read it just before writing <paramref name="changes"/>.</summary>
    public void Expect(IReadOnlyDictionary<string, string> before, IReadOnlyDictionary<string, string> changes, string source, string keyId, string? clientAddress)
    {
        lock (_gate)
        {
            foreach (var (flag, variant) in changes.Where(c => before[c.Key] != c.Value))
            {
                var pending = _expected.TryGetValue(flag, out var list) ? list : _expected[flag] = [];
                pending.RemoveAll(e => DateTimeOffset.UtcNow - e.At > ExpectationLifetime);
                pending.Add(new Expected(before[flag], variant, source, keyId, clientAddress, DateTimeOffset.UtcNow));
            }
        }
    }

    protected override async Task ExecuteAsync(CancellationToken stoppingToken)
    {
        using var reloads = ChangeToken.OnChange(configuration.GetReloadToken, () => Signal());
        IReadOnlyDictionary<string, string>? last = null;
        while (!stoppingToken.IsCancellationRequested)
        {
            try
            {
                var now = await store.ReadAsync(stoppingToken);
                if (last is not null)
                {
                    Record(last, now);
                }

                last = now;
            }
            catch (FlagStoreUnavailableException)
            {
                // Redis out of reach or a half-written file: compared again at the next read that works.
            }

            try
            {
                await _changed.WaitAsync(Poll, stoppingToken);
            }
            catch (OperationCanceledException)
            {
                return;
            }
        }
    }

    private void Signal()
    {
        if (_changed.CurrentCount == 0)
        {
            try
            {
                _changed.Release();
            }
            catch (SemaphoreFullException)
            {
                // Already signalled.
            }
        }
    }

    /// <summary>
    /// Records what differs between two reads. Changes by others closer together than the reads (the file watcher waits
    /// 250 ms) count as one; an admin API change is told apart from what came before it by what the API read.
    /// </summary>
    private void Record(IReadOnlyDictionary<string, string> before, IReadOnlyDictionary<string, string> now)
    {
        foreach (var (flag, variant) in now)
        {
            if (!before.TryGetValue(flag, out var old) || old == variant)
            {
                continue;
            }

            RecordChange(flag, old, variant);
        }
    }

    /// <summary>
    /// One flag's change between two reads, as a chain: each admin API change announced since, in order, and whatever
    /// else changed the flag between them (named by the store). Announced changes not yet in the store stay announced.
    /// </summary>
    private void RecordChange(string flag, string old, string variant)
    {
        List<Expected> pending;
        lock (_gate)
        {
            pending = _expected.Remove(flag, out var list) ? list.Where(e => DateTimeOffset.UtcNow - e.At < ExpectationLifetime).ToList() : [];
        }

        var current = old;
        var used = 0;
        foreach (var expected in pending)
        {
            if (current == variant)
            {
                break;
            }

            used++;
            if (expected.Old != current)
            {
                LogChange(_log, flag, current, expected.Old, ExternalSource);
                current = expected.Old;
            }

            // Who, as attributes of their own (the service defaults export scopes): the key's id, never the key.
            using (_log.BeginScope(new Dictionary<string, object> { ["KeyId"] = expected.KeyId, ["ClientAddress"] = expected.ClientAddress ?? "unknown" }))
            {
                LogChange(_log, flag, current, expected.Variant, expected.Source);
            }

            current = expected.Variant;
        }

        if (current != variant)
        {
            LogChange(_log, flag, current, variant, ExternalSource);
        }

        if (used < pending.Count)
        {
            lock (_gate)
            {
                var later = _expected.TryGetValue(flag, out var list) ? list : [];
                _expected[flag] = [.. pending.Skip(used), .. later];
            }
        }
    }

    /// <summary>A change the admin API did not make is named by the store it appeared in.</summary>
    private string ExternalSource => store is RedisFlagStore ? Redis : FlagsFile;

    [LoggerMessage(EventId = 1, EventName = "FlagChanged", Level = LogLevel.Information,
        Message = "Flag {Flag} changed from {Old} to {New} via {Source}")]
    private static partial void LogChange(ILogger logger, string flag, string old, string @new, string source);
}
