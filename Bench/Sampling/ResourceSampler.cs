using System.Diagnostics;

namespace Bench.Sampling;

/// <summary>
/// Every 50 ms while a phase runs: each process's resident set (peak and a time series for charts) and,
/// when given, the bytes in each service's temp folder (form and formatter buffers spill there).
/// </summary>
public sealed class ResourceSampler
{
    private readonly CancellationTokenSource _stop = new();
    private readonly Dictionary<string, long> _peaks = [];
    private readonly Dictionary<string, long> _tempPeaks = [];
    private readonly List<Sample> _series = [];
    private readonly IReadOnlyList<ServiceProcess> _services;
    private readonly Func<ServiceProcess, string>? _tempDirectory;
    private readonly long _started = Stopwatch.GetTimestamp();
    private readonly Task _loop;

    public ResourceSampler(IEnumerable<ServiceProcess> services, Func<ServiceProcess, string>? tempDirectory = null)
    {
        _services = services.ToList();
        _tempDirectory = tempDirectory;
        _loop = SampleAsync(_stop.Token);
    }

    /// <summary>One reading: seconds since the sampler started and each service's working set in bytes.</summary>
    public sealed record Sample(double Seconds, IReadOnlyDictionary<string, long> WorkingSet);

    /// <summary>Peak bytes in each service's temp folder (after <see cref="StopAsync"/>; empty without folders).</summary>
    public IReadOnlyDictionary<string, long> PeakTempBytes => _tempPeaks;

    public IReadOnlyList<Sample> Series => _series;

    /// <summary>Stops sampling; returns each service's peak working set in bytes.</summary>
    public async Task<IReadOnlyDictionary<string, long>> StopAsync()
    {
        await _stop.CancelAsync();
        await _loop;
        _stop.Dispose();
        return _peaks;
    }

    private async Task SampleAsync(CancellationToken cancellationToken)
    {
        using var timer = new PeriodicTimer(TimeSpan.FromMilliseconds(50));
        try
        {
            do
            {
                Take();
            }
            while (await timer.WaitForNextTickAsync(cancellationToken));
        }
        catch (OperationCanceledException)
        {
            Take();
        }
    }

    private void Take()
    {
        var workingSets = new Dictionary<string, long>();
        foreach (var service in _services)
        {
            var bytes = service.WorkingSet();
            workingSets[service.Name] = bytes;
            _peaks[service.Name] = Math.Max(_peaks.GetValueOrDefault(service.Name), bytes);
            if (_tempDirectory is not null)
            {
                _tempPeaks[service.Name] = Math.Max(_tempPeaks.GetValueOrDefault(service.Name), FolderBytes(_tempDirectory(service)));
            }
        }

        _series.Add(new Sample(Stopwatch.GetElapsedTime(_started).TotalSeconds, workingSets));
    }

    private static long FolderBytes(string path)
    {
        var folder = new DirectoryInfo(path);
        if (!folder.Exists)
        {
            return 0;
        }

        return folder.EnumerateFiles("*", SearchOption.AllDirectories).Sum(Length);
    }

    private static long Length(FileInfo file)
    {
        try
        {
            return file.Length;
        }
        catch (IOException)
        {
            // A buffer file deleted between listing and reading: it no longer holds bytes.
            return 0;
        }
    }
}
