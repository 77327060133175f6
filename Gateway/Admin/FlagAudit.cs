using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.ServiceDefaults.FlagSources;
using HttpPerf.ServiceDefaults;
using Microsoft.Extensions.Primitives;

namespace Gateway.Admin;

/// <summary>
/// One audit record per flag change, wherever it came from: the admin API (a dashboard command, the admin page, any
/// other caller), an edit of the flags file, or a write to Redis by anything else. The Gateway is the one auditor, so
/// a change is recorded once, not once per service or replica.
/// - The admin API tells it what it writes: announced before the write (<see cref="Expect"/>), recorded once written
///   (<see cref="Written"/>), with the key id and the caller's address. However fast they come, none is missed.
/// - Anything else is found by reading the store on every configuration reload (which the file watcher and Redis's
///   change channel trigger) and every 10 s, and comparing with the last read; it is named by its store. Two such
///   changes closer together than the reads (the file watcher waits 250 ms) count as one.
/// Category <see cref="SystemContract.AuditCategory"/>, event <c>FlagChanged</c>: the dashboard's structured logs
/// filter on either.
/// </summary>
public sealed partial class FlagAudit(IFlagStore store, IConfiguration configuration, ILoggerFactory loggers) : BackgroundService
{
    /// <summary>Where a change came from: the <see cref="ClientHeader"/> values the admin API knows, then the stores.</summary>
    public const string DashboardCommand = "dashboard-command";
    public const string AdminPage = "admin-page";
    public const string AdminApi = "admin-api";
    public const string FlagsFile = "flags-file";
    public const string Redis = "redis";

    /// <summary>The header in which an admin API caller names itself (<see cref="DashboardCommand"/>, <see cref="AdminPage"/>).</summary>
    public const string ClientHeader = "X-Admin-Client";

    private static readonly TimeSpan Poll = TimeSpan.FromSeconds(10);

    private readonly ILogger _log = loggers.CreateLogger(SystemContract.AuditCategory);
    private readonly Lock _gate = new();
    private readonly SemaphoreSlim _changed = new(0, 1);

    // Under _gate: the flags as last known (null until the first read), and the variants the admin API is writing.
    private Dictionary<string, string>? _last;
    private readonly Dictionary<string, List<string>> _writing = [];

    // Under _gate: how many writes the admin API has recorded. A read begun before the last of them may hold what the
    // store was before it, and is read again rather than compared (it would record the API's change undone, then redone).
    private long _written;

    /// <summary>The client an admin API call says it is (<see cref="ClientHeader"/>); any other value is the admin API itself.</summary>
    public static string SourceOf(string? client) => client is DashboardCommand or AdminPage ? client : AdminApi;

    /// <summary>The admin API is about to write <paramref name="changes"/>: a read that sees them leaves them to <see cref="Written"/>.</summary>
    public void Expect(IReadOnlyDictionary<string, string> changes)
    {
        lock (_gate)
        {
            foreach (var (flag, variant) in changes)
            {
                (_writing.TryGetValue(flag, out var variants) ? variants : _writing[flag] = []).Add(variant);
            }
        }
    }

    /// <summary>The write failed: nothing to record.</summary>
    public void Forget(IReadOnlyDictionary<string, string> changes)
    {
        lock (_gate)
        {
            foreach (var (flag, variant) in changes)
            {
                _writing.GetValueOrDefault(flag)?.Remove(variant);
            }
        }
    }

    /// <summary>
    /// The admin API wrote <paramref name="changes"/> over <paramref name="before"/> (what it read just before): one
    /// record per flag that changed. A change by others that came between this auditor's last read and the API's read
    /// is recorded first, by its store.
    /// </summary>
    public void Written(IReadOnlyDictionary<string, string> before, IReadOnlyDictionary<string, string> changes, string source, string keyId, string? clientAddress)
    {
        lock (_gate)
        {
            foreach (var (flag, variant) in changes)
            {
                _writing.GetValueOrDefault(flag)?.Remove(variant);
                var old = before[flag];
                if (old == variant)
                {
                    continue;
                }

                if (_last is not null && _last[flag] != old)
                {
                    LogChange(_log, flag, _last[flag], old, ExternalSource);
                }

                // Who, as attributes of their own (the service defaults export scopes): the key's id, never the key.
                using (_log.BeginScope(new Dictionary<string, object> { ["KeyId"] = keyId, ["ClientAddress"] = clientAddress ?? "unknown" }))
                {
                    LogChange(_log, flag, old, variant, source);
                }

                _last?[flag] = variant;
            }

            _written++;
        }
    }

    protected override async Task ExecuteAsync(CancellationToken stoppingToken)
    {
        using var reloads = ChangeToken.OnChange(configuration.GetReloadToken, Signal);
        while (!stoppingToken.IsCancellationRequested)
        {
            try
            {
                long written;
                lock (_gate)
                {
                    written = _written;
                }

                Record(await store.ReadAsync(stoppingToken), written);
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
        try
        {
            _changed.Release();
        }
        catch (SemaphoreFullException)
        {
            // Already signalled.
        }
    }

    /// <summary>What differs from the last read, except what the admin API is writing (<see cref="Written"/> records that).</summary>
    private void Record(IReadOnlyDictionary<string, string> now, long written)
    {
        lock (_gate)
        {
            if (written != _written)
            {
                Signal();
                return;
            }

            if (_last is null)
            {
                _last = new Dictionary<string, string>(now);
                return;
            }

            foreach (var (flag, variant) in now)
            {
                if (!_last.TryGetValue(flag, out var old) || old == variant || _writing.GetValueOrDefault(flag)?.Contains(variant) == true)
                {
                    continue;
                }

                LogChange(_log, flag, old, variant, ExternalSource);
                _last[flag] = variant;
            }
        }
    }

    /// <summary>A change the admin API did not make is named by the store it appeared in.</summary>
    private string ExternalSource => store is RedisFlagStore ? Redis : FlagsFile;

    [LoggerMessage(EventId = 1, EventName = "FlagChanged", Level = LogLevel.Information,
        Message = "Flag {Flag} changed from {Old} to {New} via {Source}")]
    private static partial void LogChange(ILogger logger, string flag, string old, string @new, string source);
}
