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

    public static bool IsAlive(int pid) => ParentOf(pid) is not null;

    // /proc/<pid>/stat: "pid (comm) state ppid ..."; comm may hold spaces and parentheses, so read after the last ')'.
    private static int? ParentOf(int pid)
    {
        try
        {
            var stat = File.ReadAllText($"/proc/{pid}/stat");
            var fields = stat[(stat.LastIndexOf(')') + 2)..].Split(' ');
            return fields[0] == "Z" ? null : int.Parse(fields[1], System.Globalization.CultureInfo.InvariantCulture);
        }
        catch (IOException)
        {
            return null;
        }
    }
}
