using System.Diagnostics;
using System.Net.Sockets;

namespace Bench.Latency;

/// <summary>This program's <see cref="FarServer"/> as a process on the far side of a <see cref="DelayLine"/>.</summary>
internal sealed class FarProcess : IAsyncDisposable
{
    public const string Command = "far-server";

    private readonly Process _process;

    private FarProcess(Process process) => _process = process;

    public static async Task<FarProcess> StartAsync(DelayLine line, CancellationToken cancellationToken)
    {
        var start = line.Command("dotnet", [typeof(FarServer).Assembly.Location, Command, "--address", line.FarAddress.ToString()]);
        start.RedirectStandardOutput = true;
        start.RedirectStandardError = true;
        var process = Process.Start(start) ?? throw new InvalidOperationException("Could not start the far server.");
        var far = new FarProcess(process);
        var output = new System.Collections.Concurrent.ConcurrentQueue<string>();
        process.OutputDataReceived += (_, e) => output.Enqueue(e.Data ?? "");
        process.ErrorDataReceived += (_, e) => output.Enqueue(e.Data ?? "");
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        timeout.CancelAfter(TimeSpan.FromSeconds(30));
        try
        {
            while (true)
            {
                try
                {
                    using var socket = new Socket(SocketType.Stream, ProtocolType.Tcp);
                    await socket.ConnectAsync(line.FarAddress, FarServer.Port, timeout.Token);
                    return far;
                }
                catch (SocketException) when (!process.HasExited)
                {
                    await Task.Delay(200, timeout.Token);
                }
                catch (SocketException)
                {
                    throw new InvalidOperationException($"The far server exited with {process.ExitCode}:{Environment.NewLine}{string.Join(Environment.NewLine, output.TakeLast(20))}");
                }
            }
        }
        catch
        {
            await far.DisposeAsync();
            throw;
        }
    }

    public async ValueTask DisposeAsync()
    {
        if (!_process.HasExited)
        {
            _process.Kill();
            await _process.WaitForExitAsync();
        }

        _process.Dispose();
    }
}
