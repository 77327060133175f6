using System.Diagnostics;
using System.Net;
using System.Net.Sockets;

namespace HttpPerf.Tests.Infrastructure;

/// <summary>
/// Debian's <c>redis-server</c> as a real process on a loopback port, with no persistence: what
/// <c>ConnectionStrings__flags</c> points at. It can be stopped and started again on the same port, as an
/// outage would. Tests that need it skip, saying so, where it is not installed (<c>.ci/run</c> installs it).
/// </summary>
public sealed class RedisServer : IAsyncDisposable
{
    public const string Executable = "/usr/bin/redis-server";

    private Process? _process;

    private RedisServer(int port) => Port = port;

    public int Port { get; }

    public string ConnectionString => $"127.0.0.1:{Port}";

    public static bool IsInstalled => File.Exists(Executable);

    public static async Task<RedisServer> StartAsync()
    {
        var server = new RedisServer(Ports.Free());
        await server.StartAgainAsync();
        return server;
    }

    /// <summary>Starts the server (again) on its port and waits until it accepts connections.</summary>
    public async Task StartAgainAsync()
    {
        _process = Process.Start(new ProcessStartInfo(Executable, ["--port", Port.ToString(System.Globalization.CultureInfo.InvariantCulture), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
        }) ?? throw new InvalidOperationException("redis-server did not start");
        _process.OutputDataReceived += (_, _) => { };
        _process.ErrorDataReceived += (_, _) => { };
        _process.BeginOutputReadLine();
        _process.BeginErrorReadLine();

        var deadline = Stopwatch.GetTimestamp() + 10 * Stopwatch.Frequency;
        while (true)
        {
            try
            {
                using var client = new TcpClient();
                await client.ConnectAsync(IPAddress.Loopback, Port);
                return;
            }
            catch (SocketException) when (Stopwatch.GetTimestamp() < deadline && !_process.HasExited)
            {
                await Task.Delay(50);
            }
        }
    }

    /// <summary>The server's process: frozen (ProcessFaults.FreezeAsync), it answers nothing and its connections stay open, as where its node is lost.</summary>
    public int ProcessId => _process?.Id ?? throw new InvalidOperationException("redis-server is not running");

    /// <summary>An outage: the server is gone, and every connection to it with it.</summary>
    public async Task StopAsync()
    {
        if (_process is { HasExited: false })
        {
            _process.Kill();
            await _process.WaitForExitAsync();
        }
    }

    public async ValueTask DisposeAsync()
    {
        await StopAsync();
        _process?.Dispose();
    }
}
