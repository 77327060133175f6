using Bench.LocalSystem;

namespace HttpPerf.Tests.Infrastructure;

public static class Ports
{
    /// <summary>A loopback port free right now, outside the range the kernel hands out (<see cref="FreePorts"/>).</summary>
    public static int Free() => FreePorts.Next();
}
