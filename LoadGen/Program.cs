using System.CommandLine;
using LoadGen.Commands;

var root = new RootCommand("Drives traffic through the Gateway (run), measures the system (bench) and profiles a route (profile).")
{
    RunCommand.Create(),
    BenchCommand.Create(),
    LatencyCommand.Create(),
    LatencyCommand.CreateFarServer(),
    ProfileCommand.Create(),
};

return await root.Parse(args).InvokeAsync();
