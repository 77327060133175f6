using System.Globalization;

namespace Bench.Sampling;

/// <summary>
/// A container's memory cgroup on this machine (cgroup v1): what the kernel counts against its limit, and its
/// high-water mark, which root may reset between measurements (<c>memory.max_usage_in_bytes</c>).
/// </summary>
public static class MemoryCgroup
{
    /// <summary>
    /// The memory cgroup folder of the process <paramref name="pid"/> (a container's init) on this machine; null on
    /// cgroup v2 or where it cannot be read.
    /// </summary>
    public static string? Of(int pid)
    {
        try
        {
            var line = File.ReadLines($"/proc/{pid}/cgroup").FirstOrDefault(l => l.Split(':') is [_, var controllers, _] && controllers.Split(',').Contains("memory"));
            var folder = line is null ? null : Path.Combine("/sys/fs/cgroup/memory", line[(line.LastIndexOf(':') + 1)..].TrimStart('/'));
            return folder is not null && Directory.Exists(folder) ? folder : null;
        }
        catch (IOException)
        {
            return null;
        }
    }

    /// <summary>The cgroup's high-water mark in bytes, or null.</summary>
    public static long? PeakBytes(string? cgroup) =>
        cgroup is not null && File.Exists(Path.Combine(cgroup, "memory.max_usage_in_bytes"))
            ? long.Parse(File.ReadAllText(Path.Combine(cgroup, "memory.max_usage_in_bytes")).Trim(), CultureInfo.InvariantCulture)
            : null;

    /// <summary>What the cgroup holds now, in bytes: what counts against its limit, and its anonymous memory (rss), its page cache (cache), and the part of that cache that cannot be given back without swap (shmem: tmpfs and memfd, the runtime's double-mapped code among them).</summary>
    public static (long Usage, long Rss, long Cache, long Shmem)? Now(string? cgroup)
    {
        try
        {
            if (cgroup is null)
            {
                return null;
            }

            var stat = File.ReadLines(Path.Combine(cgroup, "memory.stat")).Select(l => l.Split(' ')).Where(p => p.Length == 2)
                .ToDictionary(p => p[0], p => long.Parse(p[1], CultureInfo.InvariantCulture));
            return (long.Parse(File.ReadAllText(Path.Combine(cgroup, "memory.usage_in_bytes")).Trim(), CultureInfo.InvariantCulture),
                stat.GetValueOrDefault("rss"), stat.GetValueOrDefault("cache"), stat.GetValueOrDefault("shmem"));
        }
        catch (IOException)
        {
            return null; // the container died between two reads
        }
    }

    /// <summary>Starts the cgroup's high-water mark again from what it holds now (root only); false where it cannot.</summary>
    public static bool ResetPeak(string? cgroup)
    {
        try
        {
            if (cgroup is null)
            {
                return false;
            }

            File.WriteAllText(Path.Combine(cgroup, "memory.max_usage_in_bytes"), "0");
            return true;
        }
        catch (Exception error) when (error is IOException or UnauthorizedAccessException)
        {
            return false;
        }
    }
}
