using System.Net;
using System.Net.Sockets;

namespace HttpPerf.Tests.Infrastructure;

public static class Ports
{
    /// <summary>A loopback port free right now: the kernel's pick for a listener that is closed at once.</summary>
    public static int Free()
    {
        using var probe = new TcpListener(IPAddress.Loopback, 0);
        probe.Start();
        var port = ((IPEndPoint)probe.LocalEndpoint).Port;
        probe.Stop();
        return port;
    }
}
