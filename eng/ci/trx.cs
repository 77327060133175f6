#:property PublishAot=false
// Reads the TRX logs `dotnet test --logger trx` writes, for .ci/run (a .NET 10 file-based program: `dotnet run eng/ci/trx.cs -- ...`).
//   trx.cs counts DIR           "P F": tests passed and failed in every log under DIR
//   trx.cs failed DIR           the failed tests, one "Namespace.Class.Method" a line (a theory's rows are one line)
//   trx.cs classes DIR [OUT]    each test class's wall time, in the order they ran, as a Markdown table (to OUT, else stdout)
// A class's wall time runs from its first test's start to its last one's end ("from": when it began, after the run's
// first test); its fixture's start comes before its first test. Where the suite's two lanes run side by side
// (tests/HttpPerf.Tests/Infrastructure/Lanes.cs), classes overlap and their times add up to more than the run's.
using System.Globalization;
using System.Xml.Linq;

XNamespace ns = "http://microsoft.com/schemas/VisualStudio/TeamTest/2010";
if (args.Length < 2 || !Directory.Exists(args[1]))
{
    Console.Error.WriteLine("usage: trx.cs counts|failed|classes DIR [OUT]");
    return 2;
}

var results = Directory.GetFiles(args[1], "*.trx", SearchOption.AllDirectories).SelectMany(Read).ToList();
switch (args[0])
{
    case "counts":
        Console.WriteLine($"{results.Count(r => r.Outcome == "Passed")} {results.Count(r => r.Failed)}");
        return 0;
    case "failed":
        foreach (var name in results.Where(r => r.Failed).Select(r => r.Method).Distinct())
        {
            Console.WriteLine(name);
        }

        return 0;
    case "classes":
        var lines = new List<string> { "| test class | tests | from | wall time |", "|---|---:|---:|---:|" };
        var ran = results.Where(r => r.Start is not null && r.End is not null).OrderBy(r => r.Start).ToList();
        var first = ran.FirstOrDefault()?.Start ?? default;
        var wall = ran.GroupBy(r => r.Class).Select(c => (Class: c.Key, Tests: c.Count(), From: c.Min(r => r.Start!.Value) - first, Time: c.Max(r => r.End!.Value) - c.Min(r => r.Start!.Value))).ToList();
        lines.AddRange(wall.Select(c => $"| {c.Class} | {c.Tests} | {Format(c.From)} | {Format(c.Time)} |"));
        var total = ran.Count == 0 ? TimeSpan.Zero : ran.Max(r => r.End!.Value) - ran.Min(r => r.Start!.Value);
        lines.Add($"| all | {ran.Count} | | {Format(total)} |");
        if (args.Length > 2)
        {
            File.WriteAllLines(args[2], lines);
        }
        else
        {
            lines.ForEach(Console.WriteLine);
        }

        return 0;
    default:
        Console.Error.WriteLine($"unknown command {args[0]}");
        return 2;
}

IEnumerable<Result> Read(string path)
{
    var document = XDocument.Load(path);
    var methods = document.Descendants(ns + "UnitTest").ToDictionary(
        t => (string)t.Attribute("id")!,
        t => t.Element(ns + "TestMethod") is { } m ? ((string)m.Attribute("className")!, (string)m.Attribute("name")!) : ("", (string)t.Attribute("name")!));
    foreach (var result in document.Descendants(ns + "UnitTestResult"))
    {
        var (className, method) = methods.GetValueOrDefault((string)result.Attribute("testId")!, ("", (string)result.Attribute("testName")!));
        // xunit's adapter names the method by its display name: the class's full name, the method, and a theory's arguments.
        var name = method.Split('(')[0];
        var fullName = name.StartsWith(className + ".", StringComparison.Ordinal) || className.Length == 0 ? name : $"{className}.{name}";
        var type = className.Length > 0 ? className : fullName[..Math.Max(0, fullName.LastIndexOf('.'))];
        yield return new Result(type[(type.LastIndexOf('.') + 1)..], fullName, (string?)result.Attribute("outcome") ?? "", Time(result, "startTime"), Time(result, "endTime"));
    }
}

static DateTimeOffset? Time(XElement element, string attribute) =>
    DateTimeOffset.TryParse((string?)element.Attribute(attribute), CultureInfo.InvariantCulture, DateTimeStyles.None, out var time) ? time : null;

static string Format(TimeSpan time) => time.TotalMinutes >= 1 ? $"{(int)time.TotalMinutes} min {time.Seconds:D2} s" : $"{time.TotalSeconds:F1} s";

internal sealed record Result(string Class, string Method, string Outcome, DateTimeOffset? Start, DateTimeOffset? End)
{
    public bool Failed => Outcome is "Failed" or "Error" or "Timeout" or "Aborted";
}
