using System.Globalization;

namespace Bench.LocalSystem;

/// <summary>
/// A replica made slow or stuck on purpose (docs/pitfalls/Frontend.Replicas.md), for LocalSystem's processes and the
/// AppHost's dashboard commands (compiled into the AppHost too: plain .NET only). <b>Freeze</b>: SIGSTOP, so the
/// kernel still accepts the process's connections and takes their requests, and nothing answers, as in a long GC
/// pause, a deadlock or a paused VM; SIGCONT lets it go on. <b>Starve</b>: a cgroup of its own with a CPU quota (10 ms
/// of every 100 ms for a tenth of a core), as a noisy neighbour or a CPU limit would: it answers, slowly. cgroups need root.
/// </summary>
public static class ProcessFaults
{
    private static bool Unified => File.Exists("/sys/fs/cgroup/cgroup.controllers");

    private static string CpuRoot => Unified ? "/sys/fs/cgroup" : "/sys/fs/cgroup/cpu";

    /// <summary>Whether this process may starve another: root, and a cgroup file system with the CPU controller.</summary>
    public static bool CanStarve => Environment.UserName == "root" && (Unified || Directory.Exists(CpuRoot));

    /// <summary>
    /// Stops <paramref name="pid"/> and every process below it: under the AppHost, a project's process is <c>dotnet run</c>,
    /// and the service is its child.
    /// </summary>
    public static Task FreezeAsync(int pid) => RunAsync("kill", ["-STOP", .. WithDescendants(pid).Select(Id)]);

    public static Task ThawAsync(int pid) => RunAsync("kill", ["-CONT", .. WithDescendants(pid).Select(Id)]);

    /// <summary>Moves <paramref name="pid"/> into a cgroup limited to <paramref name="cores"/> of a core; the task it returns puts it back.</summary>
    public static async Task<Func<Task>> StarveAsync(int pid, double cores = 0.1)
    {
        const int Period = 100_000;
        var quota = ((int)(Period * cores)).ToString(CultureInfo.InvariantCulture);
        var home = Path.Combine(CpuRoot, CgroupOf(pid).TrimStart('/'));
        var starved = Path.Combine(CpuRoot, $"httpperf-starved-{pid}");
        Directory.CreateDirectory(starved);
        if (Unified)
        {
            await File.WriteAllTextAsync(Path.Combine(CpuRoot, "cgroup.subtree_control"), "+cpu");
            await File.WriteAllTextAsync(Path.Combine(starved, "cpu.max"), $"{quota} {Period}");
        }
        else
        {
            await File.WriteAllTextAsync(Path.Combine(starved, "cpu.cfs_period_us"), Period.ToString(CultureInfo.InvariantCulture));
            await File.WriteAllTextAsync(Path.Combine(starved, "cpu.cfs_quota_us"), quota);
        }

        var tree = WithDescendants(pid);
        foreach (var process in tree)
        {
            await File.WriteAllTextAsync(Path.Combine(starved, "cgroup.procs"), Id(process));
        }

        return async () =>
        {
            try
            {
                foreach (var process in tree.Where(p => Directory.Exists($"/proc/{p}")))
                {
                    await File.WriteAllTextAsync(Path.Combine(home, "cgroup.procs"), Id(process));
                }
            }
            finally
            {
                Directory.Delete(starved);
            }
        };
    }

    /// <summary>Runs a program to its end; a non-zero exit throws, with what it printed.</summary>
    public static async Task RunAsync(string program, params string[] arguments) =>
        (await ProgramRun.RunAsync(program, arguments, Timeout.InfiniteTimeSpan, CancellationToken.None)).EnsureSucceeded();

    /// <summary><paramref name="pid"/> and every process below it, from each process's parent in /proc/&lt;pid&gt;/stat.</summary>
    public static IReadOnlyList<int> WithDescendants(int pid)
    {
        var parents = new Dictionary<int, int>();
        foreach (var directory in Directory.EnumerateDirectories("/proc"))
        {
            if (int.TryParse(Path.GetFileName(directory), out var child) && ParentOf(child) is int parent)
            {
                parents[child] = parent;
            }
        }

        var tree = new List<int> { pid };
        for (var i = 0; i < tree.Count; i++)
        {
            tree.AddRange(parents.Where(p => p.Value == tree[i]).Select(p => p.Key));
        }

        return tree;
    }

    /// <summary>The parent of <paramref name="pid"/>; null when it has gone or is a zombie.</summary>
    public static int? ParentOf(int pid)
    {
        try
        {
            // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so read after the last ')'.
            var stat = File.ReadAllText($"/proc/{pid}/stat");
            var fields = stat[(stat.LastIndexOf(')') + 2)..].Split(' ');
            return fields[0] == "Z" ? null : int.Parse(fields[1], CultureInfo.InvariantCulture);
        }
        catch (IOException)
        {
            return null;
        }
    }

    // The process's cgroup: the "0::" line on cgroup v2, the cpu controller's line on v1.
    private static string CgroupOf(int pid) => File.ReadLines($"/proc/{pid}/cgroup")
        .Select(line => line.Split(':', 3))
        .First(parts => Unified ? parts[0] == "0" : parts[1].Split(',').Contains("cpu"))[2];

    private static string Id(int pid) => pid.ToString(CultureInfo.InvariantCulture);
}
