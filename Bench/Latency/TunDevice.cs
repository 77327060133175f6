using System.Runtime.InteropServices;

namespace Bench.Latency;

/// <summary>
/// A Linux TUN device opened through <c>/dev/net/tun</c>: each read returns one IP packet the kernel routed to it,
/// each write hands one IP packet to the kernel as if it had arrived on the device. The device lives as long as
/// this handle (not persistent), and may be moved to another network namespace while open.
/// </summary>
/// <remarks>See the kernel's Documentation/networking/tuntap.rst. Needs root (CAP_NET_ADMIN).</remarks>
internal sealed class TunDevice : IDisposable
{
    private const int ReadWrite = 2;         // O_RDWR
    private const short Tun = 0x0001;        // IFF_TUN: IP packets, no Ethernet header
    private const short NoPacketInfo = 0x1000; // IFF_NO_PI: no 4-byte prefix before each packet
    private const nuint SetInterface = 0x400454ca; // TUNSETIFF = _IOW('T', 202, int)
    private const short PollIn = 0x0001;

    private readonly int _fd;

    private TunDevice(string name, int fd)
    {
        Name = name;
        _fd = fd;
    }

    public string Name { get; }

    public static TunDevice Open(string name)
    {
        if (name.Length > 15)
        {
            throw new ArgumentException($"An interface name has at most 15 characters: {name}.", nameof(name));
        }

        var fd = OpenFile("/dev/net/tun", ReadWrite);
        if (fd < 0)
        {
            throw new IOException($"open /dev/net/tun: errno {Marshal.GetLastPInvokeError()} (root and the tun module are needed)");
        }

        // struct ifreq: the name in 16 bytes, then the flags (a short), in 40 bytes in all.
        var request = new byte[40];
        System.Text.Encoding.ASCII.GetBytes(name, request);
        BitConverter.TryWriteBytes(request.AsSpan(16), (short)(Tun | NoPacketInfo));
        if (Ioctl(fd, SetInterface, request) < 0)
        {
            var errno = Marshal.GetLastPInvokeError();
            _ = Close(fd);
            throw new IOException($"TUNSETIFF {name}: errno {errno}");
        }

        return new TunDevice(name, fd);
    }

    /// <summary>Reads one packet into <paramref name="buffer"/>; 0 if none arrived within <paramref name="timeoutMs"/>.</summary>
    public int Read(byte[] buffer, int timeoutMs)
    {
        var poll = new PollFd { Fd = _fd, Events = PollIn };
        var ready = Poll(ref poll, 1, timeoutMs);
        if (ready <= 0)
        {
            return 0;
        }

        var read = (int)ReadFile(_fd, buffer, buffer.Length);
        return read < 0 ? 0 : read;
    }

    public void Write(byte[] packet, int length) => _ = WriteFile(_fd, packet, length);

    public void Dispose() => _ = Close(_fd);

    [StructLayout(LayoutKind.Sequential)]
    private struct PollFd
    {
        public int Fd;
        public short Events;
        public short ReturnedEvents;
    }

    [DllImport("libc", EntryPoint = "open", SetLastError = true)]
    private static extern int OpenFile([MarshalAs(UnmanagedType.LPUTF8Str)] string path, int flags);

    [DllImport("libc", EntryPoint = "ioctl", SetLastError = true)]
    private static extern int Ioctl(int fd, nuint request, byte[] argument);

    [DllImport("libc", EntryPoint = "poll", SetLastError = true)]
    private static extern int Poll(ref PollFd fds, uint count, int timeoutMs);

    [DllImport("libc", EntryPoint = "read", SetLastError = true)]
    private static extern nint ReadFile(int fd, [Out] byte[] buffer, nint count);

    [DllImport("libc", EntryPoint = "write", SetLastError = true)]
    private static extern nint WriteFile(int fd, byte[] buffer, nint count);

    [DllImport("libc", EntryPoint = "close", SetLastError = true)]
    private static extern int Close(int fd);
}
