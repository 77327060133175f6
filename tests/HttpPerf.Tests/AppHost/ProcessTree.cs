namespace HttpPerf.Tests.AppHost;

/// <summary>What Linux's /proc says of a process: its environment, and the processes it started.</summary>
public static class ProcessTree
{
    public static Dictionary<string, string> Environment(int pid) =>
        File.ReadAllText($"/proc/{pid}/environ").Split('\0', StringSplitOptions.RemoveEmptyEntries)
            .Select(entry => entry.Split('=', 2))
            .Where(pair => pair.Length == 2)
            .GroupBy(pair => pair[0])
            .ToDictionary(g => g.Key, g => g.Last()[1]);

    /// <summary><paramref name="pid"/> and every process below it.</summary>
    public static IReadOnlyList<int> WithDescendants(int pid) => Bench.LocalSystem.ProcessFaults.WithDescendants(pid);

    public static bool IsAlive(int pid) => Bench.LocalSystem.ProcessFaults.ParentOf(pid) is not null;

    /// <summary>Every process but this one whose command line (arguments joined by NUL) <paramref name="cmdline"/> accepts.</summary>
    public static IEnumerable<int> Matching(Func<string, bool> cmdline) =>
        Directory.EnumerateDirectories("/proc")
            .Select(directory => int.TryParse(Path.GetFileName(directory), out var pid) ? pid : 0)
            .Where(pid => pid > 0 && pid != System.Environment.ProcessId)
            .Where(pid =>
            {
                try
                {
                    return cmdline(File.ReadAllText($"/proc/{pid}/cmdline"));
                }
                catch (IOException)
                {
                    return false;
                }
            });
}
