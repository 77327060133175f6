using System.Text.Json;
using Microsoft.Extensions.Logging;

namespace HttpPerf.ServiceDefaults.FlagSources;

/// <summary>
/// Logs one warning per broken version of the flags file, naming the file and the parse error (the file
/// watcher often reports one edit twice). Errors seen before the logger exists, at start-up, wait for it.
/// </summary>
public sealed partial class FlagsFileWarnings
{
    private readonly Lock _gate = new();
    private ILogger? _logger;
    private string? _lastError;
    private (string File, string Error)? _pending;

    /// <summary>Why the file in place now does not parse; null once a good version has loaded.</summary>
    public string? LastError
    {
        get
        {
            lock (_gate)
            {
                return _lastError;
            }
        }
    }

    internal void Loaded()
    {
        lock (_gate)
        {
            _lastError = null;
        }
    }

    internal void Failed(string file, FormatException error)
    {
        var reason = error.InnerException is JsonException json ? json.Message : error.Message;
        lock (_gate)
        {
            if (reason == _lastError)
            {
                return;
            }

            _lastError = reason;
            if (_logger is null)
            {
                _pending = (file, reason);
                return;
            }
        }

        LogKeptLastGood(_logger, file, reason);
    }

    internal void Attach(ILogger logger)
    {
        (string File, string Error)? pending;
        lock (_gate)
        {
            _logger = logger;
            pending = _pending;
            _pending = null;
        }

        if (pending is { } p)
        {
            LogKeptLastGood(logger, p.File, p.Error);
        }
    }

    [LoggerMessage(Level = LogLevel.Warning, Message = "The flags file {File} does not parse, so the last good flags stay in force: {Error}")]
    private static partial void LogKeptLastGood(ILogger logger, string file, string error);
}
