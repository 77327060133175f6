using System.CommandLine;
using LoadGen.Commands;

var root = new RootCommand("Drives traffic through the Gateway (run) and measures the system (bench).")
{
    RunCommand.Create(),
    BenchCommand.Create(),
    LatencyCommand.Create(),
    LatencyCommand.CreateFarServer(),
};

return await root.Parse(args).InvokeAsync();
