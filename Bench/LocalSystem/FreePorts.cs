using System.Net;
using System.Net.Sockets;

namespace Bench.LocalSystem;

/// <summary>
/// A loopback port for a process to listen on, free when asked and chosen below the kernel's ephemeral range
/// (<c>net.ipv4.ip_local_port_range</c>, 32768-60999 on Linux). The kernel's own pick for port 0 comes from that range,
/// and so does the local port of every outgoing connection: a port picked there and bound a moment later by a new
/// process can be taken in between by any of the thousands of connections a bench or the test suite opens.
/// </summary>
public static class FreePorts
{
    private const int First = 20_000;
    private const int Last = 32_767;

    public static int Next()
    {
        for (var attempt = 0; attempt < 100; attempt++)
        {
            var port = Random.Shared.Next(First, Last + 1);
            try
            {
                using var probe = new TcpListener(IPAddress.Loopback, port);
                probe.Start();
                return port;
            }
            catch (SocketException)
            {
                // Held by another listener: try another.
            }
        }

        throw new InvalidOperationException($"No free loopback port between {First} and {Last} in 100 tries.");
    }
}
