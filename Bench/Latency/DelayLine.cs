using System.Collections.Concurrent;
using System.Diagnostics;
using System.Net;

namespace Bench.Latency;

/// <summary>
/// A network path with a real round trip, for kernels without <c>tc netem</c>: a network namespace (the far
/// side) joined to this one by two TUN devices, not a veth, and two threads that move each IP packet from one
/// device to the other after a fixed one-way delay and, if set, a rate limit (a queue that drains at that rate,
/// never drops). Both ends run the kernel's own TCP, so congestion window, ACK clocking and send buffers see the
/// round trip as on a long link. A process started with <see cref="Command"/> runs on the far side and reaches
/// this side at <see cref="NearAddress"/>; this side reaches it at <see cref="FarAddress"/>. Needs root.
/// </summary>
public sealed class DelayLine : IDisposable
{
    private readonly TunDevice _near;
    private readonly TunDevice _far;
    private readonly Direction _outbound;
    private readonly Direction _inbound;
    private readonly CancellationTokenSource _stop = new();

    private DelayLine(string ns, int subnet, TunDevice near, TunDevice far, TimeSpan oneWay, double? rateMbit)
    {
        Namespace = ns;
        NearAddress = IPAddress.Parse($"10.201.{subnet}.1");
        FarAddress = IPAddress.Parse($"10.201.{subnet}.2");
        RoundTrip = oneWay * 2;
        RateMbit = rateMbit;
        _near = near;
        _far = far;
        _outbound = new Direction(near, far, oneWay, rateMbit, _stop.Token);
        _inbound = new Direction(far, near, oneWay, rateMbit, _stop.Token);
    }

    /// <summary>The far side's network namespace (<c>ip netns exec</c>).</summary>
    public string Namespace { get; }

    public IPAddress NearAddress { get; }

    public IPAddress FarAddress { get; }

    public TimeSpan RoundTrip { get; }

    public double? RateMbit { get; }

    /// <summary>Packets and bytes moved from the far side to this one so far (what a server there sends).</summary>
    public (long Packets, long Bytes) Inbound => (_inbound.Packets, _inbound.Bytes);

    /// <summary>Packets and bytes moved from this side to the far side so far.</summary>
    public (long Packets, long Bytes) Outbound => (_outbound.Packets, _outbound.Bytes);

    /// <summary>
    /// Makes the namespace and the two devices and starts moving packets, each way after half of
    /// <paramref name="roundTrip"/>, at most <paramref name="rateMbit"/> each way if set.
    /// </summary>
    public static async Task<DelayLine> StartAsync(TimeSpan roundTrip, double? rateMbit = null, CancellationToken cancellationToken = default)
    {
        var id = Environment.ProcessId % 100_000;
        var subnet = id % 250 + 1;
        var ns = $"httpperf-far-{id}";
        await Ip.RunAsync(cancellationToken, "netns", "add", ns);
        TunDevice? near = null, far = null;
        try
        {
            near = TunDevice.Open($"hpnear{id}");
            far = TunDevice.Open($"hpfar{id}");
            await Ip.RunAsync(cancellationToken, "link", "set", far.Name, "netns", ns);
            // txqueuelen: the kernel's queue in front of each device, so a burst waits for the mover instead of being dropped.
            await Ip.RunAsync(cancellationToken, "link", "set", near.Name, "txqueuelen", "10000", "up");
            await Ip.RunAsync(cancellationToken, "addr", "add", $"10.201.{subnet}.1", "peer", $"10.201.{subnet}.2", "dev", near.Name);
            await Ip.RunAsync(cancellationToken, "-n", ns, "link", "set", "lo", "up");
            await Ip.RunAsync(cancellationToken, "-n", ns, "link", "set", far.Name, "txqueuelen", "10000", "up");
            await Ip.RunAsync(cancellationToken, "-n", ns, "addr", "add", $"10.201.{subnet}.2", "peer", $"10.201.{subnet}.1", "dev", far.Name);
            var line = new DelayLine(ns, subnet, near, far, roundTrip / 2, rateMbit);
            line._outbound.Start();
            line._inbound.Start();
            return line;
        }
        catch
        {
            near?.Dispose();
            far?.Dispose();
            await Ip.RunAsync(CancellationToken.None, "netns", "del", ns);
            throw;
        }
    }

    /// <summary>Runs <paramref name="file"/> on the far side: <c>ip netns exec</c> keeps the process id.</summary>
    public ProcessStartInfo Command(string file, params IEnumerable<string> arguments) =>
        new("ip", ["netns", "exec", Namespace, file, .. arguments]);

    public void Dispose()
    {
        _stop.Cancel();
        _outbound.Join();
        _inbound.Join();
        _near.Dispose();
        _far.Dispose();
        Ip.RunAsync(CancellationToken.None, "netns", "del", Namespace).GetAwaiter().GetResult();
        _stop.Dispose();
    }

    /// <summary>One way: a reader thread stamps each packet with the time it may leave, a writer thread sends it then.</summary>
    private sealed class Direction(TunDevice from, TunDevice to, TimeSpan delay, double? rateMbit, CancellationToken stop)
    {
        private readonly BlockingCollection<(byte[] Packet, int Length, long Due)> _queue = [];
        private readonly long _delayTicks = (long)(delay.TotalSeconds * Stopwatch.Frequency);
        private readonly double? _ticksPerByte = rateMbit is { } rate ? Stopwatch.Frequency * 8 / (rate * 1e6) : null;
        private Thread? _reader;
        private Thread? _writer;
        private long _lastDeparture;
        private long _packets;
        private long _bytes;

        public long Packets => Interlocked.Read(ref _packets);

        public long Bytes => Interlocked.Read(ref _bytes);

        public void Start()
        {
            _reader = new Thread(Read) { IsBackground = true, Name = $"{from.Name} reader" };
            _writer = new Thread(Write) { IsBackground = true, Name = $"{to.Name} writer", Priority = ThreadPriority.AboveNormal };
            _reader.Start();
            _writer.Start();
        }

        public void Join()
        {
            _reader?.Join();
            _writer?.Join();
        }

        private void Read()
        {
            var buffer = new byte[65_536];
            while (!stop.IsCancellationRequested)
            {
                var length = from.Read(buffer, timeoutMs: 200);
                if (length == 0)
                {
                    continue;
                }

                var now = Stopwatch.GetTimestamp();
                // With a rate: the packet leaves the bottleneck when the ones before it have, plus its own serialization time.
                var departure = _ticksPerByte is { } perByte ? Math.Max(now, _lastDeparture) + (long)(length * perByte) : now;
                _lastDeparture = departure;
                _queue.Add((buffer[..length], length, departure + _delayTicks));
            }

            _queue.CompleteAdding();
        }

        private void Write()
        {
            foreach (var (packet, length, due) in _queue.GetConsumingEnumerable())
            {
                // Whole milliseconds, rounded up: a packet may leave up to a millisecond late, never early.
                var wait = Stopwatch.GetElapsedTime(Stopwatch.GetTimestamp(), due).TotalMilliseconds;
                if (wait > 0)
                {
                    Thread.Sleep((int)Math.Ceiling(wait));
                }

                to.Write(packet, length);
                Interlocked.Increment(ref _packets);
                Interlocked.Add(ref _bytes, length);
            }
        }
    }
}
