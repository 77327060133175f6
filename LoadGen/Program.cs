using System.CommandLine;
using LoadGen.Commands;

var root = new RootCommand("Drives the demo's traffic through the Gateway, follows the flags and answers its control endpoint (run).")
{
    RunCommand.Create(),
};

return await root.Parse(args).InvokeAsync();
