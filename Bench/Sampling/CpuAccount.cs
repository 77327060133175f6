using System.Globalization;

namespace Bench.Sampling;

/// <summary>
/// Where a machine's CPU went between two readings (<see cref="Take"/>, then <see cref="Since"/>): the machine's busy
/// time from <c>/proc/stat</c> (user, nice, system, irq and softirq of every core), and each process's own user and
/// system time from <c>/proc/&lt;pid&gt;/stat</c>, summed by <see cref="GroupOf"/> (Catalog.Api, DCP, the container
/// engine, ...). What no living process accounts for is the kernel's own work (softirqs of the network stack,
/// interrupts, kernel threads are listed apart) and processes that ended inside the window (a <c>curl</c>, a health
/// probe run as a command). Linux only; elsewhere every reading is empty.
/// </summary>
public sealed class CpuAccount
{
    private const double TicksPerSecond = 100; // USER_HZ: 100 on every Linux the .NET runtime supports

    private readonly long _busy;
    private readonly long _total;
    private readonly Dictionary<(int Pid, long Started), (string Group, long Ticks)> _processes;

    private CpuAccount(long busy, long total, Dictionary<(int, long), (string, long)> processes)
    {
        _busy = busy;
        _total = total;
        _processes = processes;
    }

    /// <summary>What was spent between two readings, in CPU seconds; <see cref="Wall"/> is the window's length.</summary>
    public sealed record Spent(double Wall, double Machine, double InNoProcess, IReadOnlyDictionary<string, GroupSpent> Groups)
    {
        /// <summary>The machine's busy time less <paramref name="groups"/> (the client, say).</summary>
        public double MachineLess(params string[] groups) => Machine - groups.Sum(g => Groups.TryGetValue(g, out var s) ? s.Seconds : 0);

        public double Of(string group) => Groups.TryGetValue(group, out var s) ? s.Seconds : 0;
    }

    /// <summary>One group's CPU seconds and how many processes it had.</summary>
    public sealed record GroupSpent(double Seconds, int Processes);

    /// <summary>The group of the process reading: the bench's own client.</summary>
    public const string Client = "client (the bench)";

    /// <summary>Kernel threads (kworker, ksoftirqd, ...), which do some of the network stack's work.</summary>
    public const string KernelThreads = "kernel threads";

    /// <summary>Processes that are no part of the system measured.</summary>
    public const string Other = "other";

    /// <summary>Podman's or Docker's processes: part of the system in container mode only.</summary>
    public const string ContainerEngine = "container engine";

    /// <summary>Redis: the flags' store in container mode.</summary>
    public const string Redis = "Redis";

    public static CpuAccount Take()
    {
        if (!OperatingSystem.IsLinux())
        {
            return new CpuAccount(0, 0, []);
        }

        // cpu  user nice system idle iowait irq softirq steal guest guest_nice; guest time is inside user already.
        var fields = File.ReadLines("/proc/stat").First().Split(' ', StringSplitOptions.RemoveEmptyEntries).Skip(1).Select(long.Parse).ToArray();
        var busy = fields[0] + fields[1] + fields[2] + fields[5] + fields[6];
        var total = fields.Take(8).Sum();
        var self = Environment.ProcessId;
        var processes = new Dictionary<(int, long), (string, long)>();
        foreach (var directory in Directory.EnumerateDirectories("/proc"))
        {
            if (!int.TryParse(Path.GetFileName(directory), NumberStyles.None, CultureInfo.InvariantCulture, out var pid))
            {
                continue;
            }

            try
            {
                var stat = File.ReadAllText(Path.Combine(directory, "stat"));
                var close = stat.LastIndexOf(')');
                var after = stat[(close + 2)..].Split(' ');
                var ticks = long.Parse(after[11], CultureInfo.InvariantCulture) + long.Parse(after[12], CultureInfo.InvariantCulture);
                var started = long.Parse(after[19], CultureInfo.InvariantCulture);
                var commandLine = File.ReadAllText(Path.Combine(directory, "cmdline")).Replace('\0', ' ');
                processes[(pid, started)] = (pid == self ? Client : GroupOf(commandLine), ticks);
            }
            catch (Exception error) when (error is IOException or UnauthorizedAccessException or FormatException or IndexOutOfRangeException)
            {
                // Ended while being read: it is counted as "in no process", like one that ended in the window.
            }
        }

        return new CpuAccount(busy, total, processes);
    }

    public Spent Since(CpuAccount before)
    {
        var groups = new Dictionary<string, (long Ticks, int Count)>();
        foreach (var (key, (group, ticks)) in _processes)
        {
            var spent = ticks - (before._processes.TryGetValue(key, out var then) ? then.Ticks : 0);
            var (sum, count) = groups.GetValueOrDefault(group);
            groups[group] = (sum + spent, count + (spent > 0 || group != Other ? 1 : 0));
        }

        var machine = (_busy - before._busy) / TicksPerSecond;
        var inProcesses = groups.Values.Sum(g => g.Ticks) / TicksPerSecond;
        return new Spent(
            (_total - before._total) / TicksPerSecond / Environment.ProcessorCount,
            machine,
            machine - inProcesses,
            groups.ToDictionary(g => g.Key, g => new GroupSpent(g.Value.Ticks / TicksPerSecond, g.Value.Count)));
    }

    /// <summary>The ids of the living processes of <paramref name="group"/> (<see cref="GroupOf"/>).</summary>
    public static IReadOnlyList<int> Processes(string group) =>
        Take()._processes.Where(p => p.Value.Group == group).Select(p => p.Key.Pid).ToList();

    /// <summary>
    /// The part of the system a process is, from its command line: a service (as a process, <c>.../bin/Release/net10.0/Catalog.Api</c>,
    /// or in its container, <c>/app/Catalog.Api</c>), the AppHost, Aspire's dashboard and DCP, the container engine, Redis.
    /// </summary>
    public static string GroupOf(string commandLine)
    {
        string[] services = ["Catalog.Api", "Frontend.Api", "Uploads.Api", "Gateway", "LoadGen", "AppHost"];
        var program = commandLine.Split(' ', 2)[0];
        var name = Path.GetFileName(program);
        foreach (var service in services)
        {
            // The program itself, or the program dotnet runs (dotnet /app/Gateway.dll).
            if (name == service || name == $"{service}.dll" || (name == "dotnet" && commandLine.Contains($"/{service}.dll", StringComparison.Ordinal)))
            {
                return service;
            }
        }

        return name switch
        {
            "Aspire.Dashboard" => "Aspire dashboard",
            "dcp" or "dcpctrl" or "dcpproc" => "DCP",
            "redis-server" => Redis,
            "dotnet" => "dotnet (CLI, build)",
            "conmon" or "podman" or "netavark" or "aardvark-dns" or "crun" or "runc" or "dockerd" or "containerd" or "docker-proxy"
                or "rootlessport" or "slirp4netns" or "catatonit" or "docker-init" => ContainerEngine,
            _ when name.StartsWith("containerd-shim", StringComparison.Ordinal) => ContainerEngine,
            _ when commandLine.Length == 0 => KernelThreads,
            _ => Other,
        };
    }
}
