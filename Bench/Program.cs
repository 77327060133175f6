using System.CommandLine;
using Bench.Commands;

var root = new RootCommand("Measures the system: the benches and their reports (bench), a real round trip (latency) and a route's profile (profile).")
{
    BenchCommand.Create(),
    LatencyCommand.Create(),
    LatencyCommand.CreateFarServer(),
    ProfileCommand.Create(),
};

return await root.Parse(args).InvokeAsync();
