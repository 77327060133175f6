using System.CommandLine;
using LoadGen.Commands;

var root = new RootCommand("Drives traffic through the Gateway and reports latency by mode.")
{
    RunCommand.Create(),
    MeasureCommand.Create(),
    MeasureUploadCommand.Create(),
    MeasureGatewayCommand.Create(),
    MeasureExportCommand.Create(),
    BenchCommand.Create(),
};

return await root.Parse(args).InvokeAsync();
