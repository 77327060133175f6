using System.Diagnostics;
using HttpPerf.Tests.Infrastructure;
using Bench.Sampling;
using LoadGen.Control;
using LoadGen.Load;

namespace HttpPerf.Tests.Repository;

/// <summary>
/// What the measuring tools decide on their own: where <c>bench --as-run</c> charges a process's CPU
/// (docs/cost.md), and when an A/B answer says it has not settled (docs/dashboard.md).
/// </summary>
[Collection(Lanes.Processes)]
[Trait(Kind.Name, Kind.Repository)]
public sealed class MeasurementToolTests
{
    [Theory]
    [InlineData("/work/repo/Catalog.Api/bin/Release/net10.0/Catalog.Api ", "Catalog.Api")]
    [InlineData("dotnet /tmp/fresh/Gateway/bin/Debug/net10.0/Gateway.dll ", "Gateway")]
    [InlineData("/app/Frontend.Api ", "Frontend.Api")]
    [InlineData("/root/.nuget/packages/aspire.hosting.orchestration.linux-x64/13.6.5/tools/dcp run-controllers --kubeconfig x ", "DCP")]
    [InlineData("/root/.nuget/packages/aspire.dashboard.sdk.linux-x64/13.6.5/tools/Aspire.Dashboard ", "Aspire dashboard")]
    [InlineData("/usr/libexec/podman/conmon --api-version 1 -c abc ", "container engine")]
    [InlineData("/usr/bin/containerd-shim-runc-v2 -namespace moby ", "container engine")]
    [InlineData("redis-server *:6379 ", "Redis")]
    [InlineData("dotnet run -c Release --project AppHost ", "dotnet (CLI, build)")]
    [InlineData("", CpuAccount.KernelThreads)]
    [InlineData("/usr/bin/python3 something.py ", CpuAccount.Other)]
    public void A_process_is_charged_to_the_part_of_the_system_it_is(string commandLine, string group) =>
        Assert.Equal(group, CpuAccount.GroupOf(commandLine));

    [Fact]
    public void CPU_this_process_spends_is_charged_to_the_client_and_counted_in_the_machines()
    {
        Assert.SkipUnless(OperatingSystem.IsLinux(), "/proc is Linux's.");
        // A spin until this process has spent 300 ms of CPU by its own count (Environment.CpuUsage), however long a loaded
        // machine takes to give it that (a 300 ms spin by the clock once got 0.19 s): the account must charge the client
        // what the process counted between the two readings, to /proc's 10 ms ticks.
        var beforeReadings = Environment.CpuUsage.TotalTime;
        var clock = Stopwatch.StartNew();
        var before = CpuAccount.Take();
        var spinning = Environment.CpuUsage.TotalTime;
        var x = 0L;
        while (Environment.CpuUsage.TotalTime - spinning < TimeSpan.FromMilliseconds(300) && clock.Elapsed < TimeSpan.FromSeconds(30))
        {
            x += clock.ElapsedTicks % 7;
        }

        var spun = (Environment.CpuUsage.TotalTime - spinning).TotalSeconds;
        var window = clock.Elapsed.TotalSeconds;
        var spent = CpuAccount.Take().Since(before);
        var withReadings = (Environment.CpuUsage.TotalTime - beforeReadings).TotalSeconds;

        Assert.True(x > 0);
        Assert.InRange(spent.Of(CpuAccount.Client), spun - 0.03, withReadings + 0.03);
        Assert.True(spent.Machine >= spent.Of(CpuAccount.Client) * 0.8, $"machine {spent.Machine} s, client {spent.Of(CpuAccount.Client)} s");
        Assert.True(spent.Wall >= window * 0.8, $"window {spent.Wall} s, {window} s by the clock");
    }

    [Theory]
    [InlineData(Bench.Benches.AsRunBench.Process, 4.0, -0.5, 2.5)] // an idle engine and Redis are no part of process mode; in no process below nothing adds nothing
    [InlineData(Bench.Benches.AsRunBench.Containers, 10.0, 3.0, 7.5)] // the engine, Redis and DCP's short-lived engine commands are container mode's
    public void What_the_system_spends_at_rest_is_its_own_processes_and_in_container_mode_the_engines(string phase, double machine, double inNoProcess, double expected)
    {
        var groups = new Dictionary<string, double>
        {
            ["Gateway"] = 1.0, ["DCP"] = 1.0, ["Aspire dashboard"] = 0.5, [CpuAccount.ContainerEngine] = 1.5, [CpuAccount.Redis] = 0.5,
            [CpuAccount.Other] = 1.2, [CpuAccount.KernelThreads] = 0.7,
        };
        var row = new Bench.Benches.AsRunBench.IdleRow(phase, "settled", 60, machine, inNoProcess, groups);
        Assert.Equal(expected, Bench.Benches.AsRunBench.SystemPercent(row), 3);
    }

    [Theory]
    [InlineData(500, 100, 500, 105, true)] // 0.20 and 0.21
    [InlineData(800, 96, 500, 95, false)] // 0.12 and 0.19: the first A/B after LoadGen's start, naive still compiling
    public void An_AB_figure_whose_halves_differ_by_more_than_15_percent_is_not_settled(double naiveFirst, double optimizedFirst, double naiveSecond, double optimizedSecond, bool settled)
    {
        var row = new AbMeasurement.Row("products", "GET /api/products",
            new AbMeasurement.Side(10, 0, 0, 600, 900, 50, naiveFirst, naiveSecond),
            new AbMeasurement.Side(10, 0, 0, 100, 150, 250, optimizedFirst, optimizedSecond));
        Assert.Equal(settled, row.Settled);
        var markdown = AbMeasurement.Markdown(new AbMeasurement.Result([row], TimeSpan.FromSeconds(12)));
        Assert.Equal(!settled, markdown.Contains("Not settled: products.", StringComparison.Ordinal));
    }

    [Fact]
    public void An_AB_row_says_why_a_ratio_is_missing_and_a_scenario_not_measured_keeps_a_row_with_its_reason()
    {
        var refused = new AbMeasurement.Row("products", "GET /api/products",
            new AbMeasurement.Side(0, 12, 0, null, null, null, Failures: new Dictionary<string, long> { ["503 Out of memory"] = 12 }),
            new AbMeasurement.Side(12, 1, 0, 100, 150, 250, 100, 100, new Dictionary<string, long> { ["cut mid-body"] = 1 }));
        var none = new AbMeasurement.Side(0, 0, 0, null, null, null);
        var unprepared = new AbMeasurement.Row("download", "", none, none, "could not prepare: HttpRequestException: refused");
        var markdown = AbMeasurement.Markdown(new AbMeasurement.Result([refused, unprepared], TimeSpan.FromSeconds(55)));

        Assert.Contains("| products GET /api/products | naive | 0 | – | – | – | | | | none counted: 12 × 503 Out of memory |", markdown);
        Assert.Contains("| 1 × cut mid-body |", markdown);
        Assert.Contains("| download | – | 0 | | | | – | | – | not measured: could not prepare: HttpRequestException: refused |", markdown);
        // A ratio with no naive figure is not "not settled": its row says why it is missing.
        Assert.DoesNotContain("Not settled", markdown);
    }

    [Fact]
    public async Task An_AB_against_a_Gateway_that_is_gone_answers_a_row_per_scenario_with_the_reason()
    {
        // Nothing listens on a port just freed: every request is refused at once.
        using var gateway = new HttpClient { BaseAddress = new Uri($"http://127.0.0.1:{Ports.Free()}") };
        await using var download = new LoadGen.Load.DownloadFile(gateway, 1024);
        var measurement = new AbMeasurement(gateway, download);

        var result = await measurement.TryMeasureAsync(["products", "download"], Cancel);

        Assert.NotNull(result);
        Assert.Equal(["products", "download"], result.Rows.Select(r => r.Scenario));
        Assert.Equal((0, null), (result.Rows[0].Naive.Requests, result.Rows[0].NotMeasured));
        Assert.StartsWith("none counted: ", result.Rows[0].Naive.NotCounted(), StringComparison.Ordinal);
        Assert.Contains("× no answer (ConnectionError)", result.Rows[0].Naive.NotCounted(), StringComparison.Ordinal);
        Assert.StartsWith("could not prepare: HttpRequestException", result.Rows[1].NotMeasured, StringComparison.Ordinal);
    }
}
