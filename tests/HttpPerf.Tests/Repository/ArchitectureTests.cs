using System.Reflection;
using System.Text.RegularExpressions;
using HttpPerf.ServiceDefaults.Contract;
using HttpPerf.Tests.Infrastructure;
using Bench.LocalSystem;

namespace HttpPerf.Tests.Repository;

/// <summary>
/// The house rules of docs/architecture.md, read from the source tree: a lesson lives in one folder named after its
/// flag, the folders of a project import one way, options are bound one way, and every test carries its kind.
/// </summary>
[Trait(Kind.Name, Kind.Repository)]
public sealed partial class ArchitectureTests
{
    private static readonly string Root = LocalSystem.RepositoryRoot();

    private static readonly string[] Projects = ["ServiceDefaults", .. SystemContract.Services.Select(s => s.Project)];

    [Fact]
    public void Each_lesson_is_one_folder_named_after_its_flag_holding_its_interface_and_every_rung()
    {
        foreach (var pitfall in Pitfalls.All)
        {
            var project = SystemContract.Spec(pitfall.Service).Project;
            var folder = Path.Combine(Root, project, pitfall.Flag[(pitfall.Flag.IndexOf('.', StringComparison.Ordinal) + 1)..]);
            Assert.True(Directory.Exists(folder), $"{pitfall.Flag}: no folder {Path.GetRelativePath(Root, folder)}");

            // The interface is the type that names the flag; its rungs are every class of the project that implements it.
            var constant = typeof(Pitfalls).GetFields().Single(f => (string?)f.GetValue(null) == pitfall.Flag).Name;
            var sources = Sources(project).ToList();
            var (interfacePath, interfaceName) = sources
                .Select(s => (s.Path, Match: InterfaceNaming().Match(s.Code)))
                .Where(s => s.Match.Success && s.Match.Groups["flag"].Value == constant)
                .Select(s => (s.Path, s.Match.Groups["name"].Value))
                .Single();
            Assert.Equal(folder, Path.GetDirectoryName(interfacePath));

            var rungs = sources.Where(s => Regex.IsMatch(s.Code, $@"class \w+(\((?:[^()]|\([^()]*\))*\))?\s*:\s*([\w<>]+,\s*)*{interfaceName}\b")).ToList();
            Assert.Equal(pitfall.Variants.Count, rungs.Count);
            Assert.All(rungs, rung => Assert.Equal(folder, Path.GetDirectoryName(rung.Path)));
        }
    }

    [Fact]
    public void The_test_process_reads_no_services_appsettings_json()
    {
        // The web hosts the tests start in their own process (LoadGen's control endpoint, the OTLP receiver, Aspire's
        // resource service) would bind whatever Kestrel endpoints a service's appsettings.json copied here names
        // (HttpPerf.Tests.csproj, LeaveOutReferencedAppSettings).
        Assert.Empty(Directory.GetFiles(AppContext.BaseDirectory, "appsettings*.json"));
    }

    [Fact]
    public void No_two_folders_of_a_project_import_each_other()
    {
        foreach (var project in Projects)
        {
            var imports = Imports(project);
            foreach (var ((from, to), types) in imports)
            {
                Assert.False(
                    imports.ContainsKey((to, from)),
                    $"{project}: {from} uses {string.Join(", ", types)} of {to}, and {to} uses {string.Join(", ", imports.GetValueOrDefault((to, from)) ?? [])} of {from}");
            }
        }
    }

    [Fact]
    public void Options_are_bound_one_way_in_the_projects_own_namespaces_and_no_comment_copies_a_measured_figure()
    {
        foreach (var (path, code) in Projects.SelectMany(Sources))
        {
            var file = Path.GetRelativePath(Root, path);
            Assert.False(Regex.IsMatch(code, @"^namespace Microsoft\.", RegexOptions.Multiline), $"{file} declares a Microsoft namespace");
            // Configuration is read through options classes (AddOptions<T>().BindConfiguration(section)), never by key; the
            // exceptions are OpenTelemetry's own OTEL_EXPORTER_OTLP_ENDPOINT, which decides whether to export at all, and the
            // platform's listening settings (WebHostDefaults' urls and ports), which Http2Listener reads as ASP.NET Core does.
            Assert.False(Regex.IsMatch(code, @"\.Configure<\w+>\(\w+\.Configuration|[Cc]onfiguration\.GetValue|[Cc]onfiguration\[""(?!OTEL_)|\.GetSection\(\w+\.Section"), $"{file} reads configuration by key");
            Assert.False(Regex.IsMatch(code, @"\bMeasured\b"), $"{file}: a figure measured by hand; figures live where a report renders them and DocsTests holds them to it");
        }
    }

    [Fact]
    public void Every_key_the_orchestrators_set_names_a_property_of_the_options_class_bound_to_its_section()
    {
        var sections = typeof(SystemContract).GetFields().Where(f => f.Name.EndsWith("Section", StringComparison.Ordinal))
            .ToDictionary(f => (string)f.GetValue(null)!, f => f.Name);
        var sources = Projects.SelectMany(Sources).ToList();
        var keys = typeof(SystemContract).GetFields()
            .Select(f => (f.Name, Value: f.GetValue(null) as string))
            .Where(f => f.Value?.Split("__") is [var section, _] && sections.ContainsKey(section))
            .ToList();
        Assert.True(keys.Count >= 10, $"{keys.Count} keys");
        foreach (var (name, value) in keys)
        {
            var (section, property) = (value!.Split("__")[0], value.Split("__")[1]);
            if (value == SystemContract.FlagsFile)
            {
                continue; // read while configuration is built, to add the flags file as a source: there is no options class yet
            }

            var bound = sources.Where(s => s.Code.Contains($"public const string Section = SystemContract.{sections[section]};", StringComparison.Ordinal)).ToList();
            var options = Assert.Single(bound);
            Assert.True(Regex.IsMatch(options.Code, $@"public [\w\[\]<>?]+ {property} {{ get; set; }}"), $"SystemContract.{name} ({value}): {Path.GetFileName(options.Path)} has no property {property}");
        }
    }

    [Fact]
    public void Every_test_class_carries_the_kind_of_its_folder()
    {
        var tests = TestClasses();
        Assert.True(tests.Count > 30, $"{tests.Count} test classes");
        Assert.All(tests, test =>
        {
            var kind = KindOf(test);
            Assert.True(kind is not null, $"{test.FullName} has no Kind trait");
            Assert.Equal($"HttpPerf.Tests.{kind}", test.Namespace);
        });
    }

    [Fact]
    public void Every_class_that_starts_a_system_runs_in_its_lane()
    {
        var tests = TestClasses();
        Assert.All(tests, test =>
        {
            var kind = KindOf(test);
            var lane = test.GetCustomAttribute<CollectionAttribute>()?.Name;
            switch (kind)
            {
                case Kind.AppHost or Kind.Containers:
                    Assert.True(lane == Lanes.Orchestrated, $"{test.FullName} starts the AppHost or an engine: [Collection(Lanes.Orchestrated)]");
                    break;
                case Kind.Processes or Kind.Pages:
                    Assert.True(lane == (Lanes.Balancing.Contains(test) ? Lanes.Orchestrated : Lanes.Processes),
                        $"{test.FullName} starts processes or Chromium: [Collection(Lanes.Processes)], or Lanes.Orchestrated where Lanes.Balancing names it");
                    break;
            }
        });
    }

    [Fact]
    public void Every_lesson_trait_names_a_pitfall_every_pitfall_has_one_and_no_AppHost_or_container_test_carries_one()
    {
        // --filter Lesson=<flag> runs one lesson's tests (docs/contributing.md); the AppHost and the containers take minutes each.
        var tagged = TestClasses()
            .SelectMany(test => test.GetCustomAttributes<LessonAttribute>().Concat(test.GetMethods().SelectMany(m => m.GetCustomAttributes<LessonAttribute>()))
                .Select(lesson => (Test: test, lesson.Flag)))
            .ToList();
        var flags = Pitfalls.All.Select(p => p.Flag).ToList();
        Assert.All(tagged, t => Assert.True(flags.Contains(t.Flag), $"{t.Test.FullName}: [Lesson(\"{t.Flag}\")] names no pitfall; use a constant of Pitfalls"));
        Assert.All(tagged, t => Assert.False(KindOf(t.Test) is Kind.AppHost or Kind.Containers, $"{t.Test.FullName} starts the AppHost or an engine: no Lesson trait"));
        Assert.Equal(flags.Order(), tagged.Select(t => t.Flag).Distinct().Order());
    }

    /// <summary>Every class of this assembly with a test.</summary>
    private static List<Type> TestClasses() => typeof(ArchitectureTests).Assembly.GetTypes()
        .Where(t => t.GetMethods().Any(m => m.GetCustomAttributes().Any(a => a is FactAttribute)))
        .ToList();

    private static string? KindOf(Type test) => test.GetCustomAttributes<TraitAttribute>().SingleOrDefault(t => t.Name == Kind.Name)?.Value;

    /// <summary>Each folder's uses of the types another folder of the same project declares: (from, to) to type names.</summary>
    private static Dictionary<(string From, string To), SortedSet<string>> Imports(string project)
    {
        var sources = Sources(project).Select(s => (Folder: FolderOf(project, s.Path), Code: Strip(s.Code))).ToList();
        var declaredIn = new Dictionary<string, HashSet<string>>();
        foreach (var (folder, code) in sources)
        {
            foreach (Match type in TypeDeclaration().Matches(code))
            {
                (declaredIn.TryGetValue(type.Groups[1].Value, out var folders) ? folders : declaredIn[type.Groups[1].Value] = []).Add(folder);
            }
        }

        var imports = new Dictionary<(string, string), SortedSet<string>>();
        foreach (var (folder, code) in sources)
        {
            foreach (var name in TypeUse().Matches(code).Select(m => m.Value).Distinct())
            {
                foreach (var other in declaredIn.GetValueOrDefault(name) ?? [])
                {
                    if (other != folder)
                    {
                        (imports.TryGetValue((folder, other), out var types) ? types : imports[(folder, other)] = []).Add(name);
                    }
                }
            }
        }

        return imports;
    }

    private static IEnumerable<(string Path, string Code)> Sources(string project) =>
        Directory.EnumerateFiles(Path.Combine(Root, project), "*.cs", SearchOption.AllDirectories)
            .Where(p => !p.Contains($"{Path.DirectorySeparatorChar}obj{Path.DirectorySeparatorChar}", StringComparison.Ordinal)
                && !p.Contains($"{Path.DirectorySeparatorChar}bin{Path.DirectorySeparatorChar}", StringComparison.Ordinal))
            .Select(p => (p, File.ReadAllText(p)));

    private static string FolderOf(string project, string path) =>
        Path.GetRelativePath(Path.Combine(Root, project), Path.GetDirectoryName(path)!) is "." ? "(root)" : Path.GetRelativePath(Path.Combine(Root, project), Path.GetDirectoryName(path)!);

    /// <summary>The code without usings, namespaces, comments, strings and constant names (a constant may share a type's name).</summary>
    private static string Strip(string code)
    {
        code = Regex.Replace(code, @"^\s*(using|namespace)\b.*$", "", RegexOptions.Multiline);
        code = Regex.Replace(code, @"//.*", "");
        code = Regex.Replace(code, @"/\*.*?\*/", "", RegexOptions.Singleline);
        code = Regex.Replace(code, @"""(?:\\.|[^""\\])*""", "\"\"");
        return Regex.Replace(code, @"\bconst\s+\w+\s+\w+", "");
    }

    [GeneratedRegex(@"interface (?<name>I\w+)(\s*:\s*[\w<>, ]+?)?\s*\{\s*public const string Flag = Pitfalls\.(?<flag>\w+);")]
    private static partial Regex InterfaceNaming();

    [GeneratedRegex(@"\b(?:class|record|interface|struct|enum)\s+([A-Z]\w*)")]
    private static partial Regex TypeDeclaration();

    [GeneratedRegex(@"(?<![.\w])[A-Z]\w*\b")]
    private static partial Regex TypeUse();
}
