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
}
