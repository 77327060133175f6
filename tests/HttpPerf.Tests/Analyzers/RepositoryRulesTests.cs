using System.Diagnostics;
using System.Text.Json;
using HttpPerf.Analyzers;
using HttpPerf.Tests.Infrastructure;
using Bench.LocalSystem;

namespace HttpPerf.Tests.Analyzers;

/// <summary>
/// The lessons' rungs are a labelled corpus for the rules: every naive rung is a true positive, every streaming and
/// optimized rung a true negative, and no other code of the services may be flagged. The services and ServiceDefaults
/// are built here with the rules' assembly, by the SDK's own compiler (as a team's build would run them), into a
/// folder of their own (the build in bin/ and obj/ is left alone: other tests run it), and the compiler's SARIF log
/// is read: it holds info diagnostics, which the console does not print, and marks any suppressed one.
/// </summary>
[Collection(Lanes.Processes)]
[Trait(Kind.Name, Kind.Analyzers)]
public sealed class RepositoryRulesTests
{
    private static readonly string Root = LocalSystem.RepositoryRoot();

    private static readonly string[] Projects =
        ["Catalog.Api/Catalog.Api.csproj", "Frontend.Api/Frontend.Api.csproj", "Uploads.Api/Uploads.Api.csproj", "Gateway/Gateway.csproj"];

    /// <summary>Each rule, and the naive rung it must flag: its file, and how often.</summary>
    private static readonly (string Rule, string File, int Count)[] NaiveRungs =
    [
        (RuleIds.CatalogClient, "Frontend.Api/CatalogClient/BufferedProductListWriter.cs", 1),
        (RuleIds.Serialization, "Catalog.Api/Serialization/NaiveCatalogWriter.cs", 1),
        (RuleIds.WriteStrategy, "Catalog.Api/WriteStrategy/FlushPerRowExportWriter.cs", 1),
        (RuleIds.UploadsReader, "Uploads.Api/Reader/FormFileUploadReader.cs", 1),
        (RuleIds.Download, "Uploads.Api/Download/ByteArrayDownloadWriter.cs", 1),
        // EnableBuffering, and the response body swapped for a MemoryStream.
        (RuleIds.Buffering, "Gateway/Buffering/BufferingExchangeLogger.cs", 2),
        // Frontend.Replicas' naive rung (RetryAfterTimeout) is the template's client defaults, which ServiceDefaults
        // gives every client: the rule finds them where they are written.
        (RuleIds.Replicas, "ServiceDefaults/Extensions.cs", 1),
        // Frontend.Grpc's naive rung (UnaryGrpcProductListWriter) calls through a channel whose limit is raised where its client is configured.
        (RuleIds.Grpc, "Frontend.Api/Grpc/CatalogGrpcClients.cs", 1),
        // Frontend.Blocking's naive rung: the Catalog call waited on with .GetAwaiter().GetResult(), and its body read with ReadAsStream().
        (RuleIds.Blocking, "Frontend.Api/Blocking/BlockingProductPageWriter.cs", 2),
        // `--health-probe` waits on its one call the same way, rightly flagged: it runs on the main thread of a process
        // that does nothing else and exits (the engine's health check), where no request waits for a pool thread.
        (RuleIds.Blocking, "ServiceDefaults/HealthProbe.cs", 1),
    ];

    [Fact]
    public async Task Each_rule_flags_its_lessons_naive_rung_and_nothing_else_in_the_services()
    {
        var found = await BuildWithRulesAsync();

        var suppressed = found.Where(d => d.Suppressed).ToList();
        Assert.True(suppressed.Count == 0, $"suppressed in source: {string.Join("; ", suppressed)}");
        var expected = NaiveRungs.Select(r => $"{r.Rule} {r.File} x{r.Count}").Order().ToList();
        var actual = found.GroupBy(d => (d.Rule, d.File)).Select(g => $"{g.Key.Rule} {g.Key.File} x{g.Count()}").Order().ToList();
        Assert.Equal(expected, actual);
        // SARIF's level for an info diagnostic is "note".
        Assert.Equal("note", found.Single(d => d.Rule == RuleIds.Replicas).Level);
        Assert.All(found.Where(d => d.Rule != RuleIds.Replicas), d => Assert.Equal("warning", d.Level));
    }

    [Fact]
    public void Every_rule_is_one_lessons_and_links_its_page()
    {
        DiagnosticDescriptorsAreLessons();
        Assert.Equal(NaiveRungs.Select(r => r.Rule).Distinct().Order(), typeof(RuleIds).GetFields().Where(f => f.Name != nameof(RuleIds.FixKey) && !f.Name.StartsWith("Fix", StringComparison.Ordinal)).Select(f => (string)f.GetRawConstantValue()!).Order());
    }

    private static void DiagnosticDescriptorsAreLessons()
    {
        var descriptors = typeof(Rules).GetFields().Where(f => f.FieldType == typeof(Microsoft.CodeAnalysis.DiagnosticDescriptor))
            .Select(f => (Microsoft.CodeAnalysis.DiagnosticDescriptor)f.GetValue(null)!).ToList();
        Assert.Equal(9, descriptors.Count);
        Assert.All(descriptors, d =>
        {
            var lesson = d.Title.ToString().Split(':')[0];
            Assert.True(File.Exists(Path.Combine(Root, d.HelpLinkUri)), $"{d.Id}: {d.HelpLinkUri} is not a page");
            Assert.Equal($"{Rules.PagesRoot}{lesson}.md", d.HelpLinkUri);
            Assert.Contains(d.Id, File.ReadAllText(Path.Combine(Root, d.HelpLinkUri)));
        });
    }

    private sealed record Found(string Rule, string File, int Line, string Level, bool Suppressed)
    {
        public override string ToString() => $"{Rule} {File}:{Line} ({Level})";
    }

    // One MSBuild run over the four services (ServiceDefaults with them, once), each with the rules as an analyzer,
    // warnings kept as warnings, outputs and a SARIF log per project in a temp folder.
    private static async Task<List<Found>> BuildWithRulesAsync()
    {
        var dir = Directory.CreateTempSubdirectory("httpperf-rules-").FullName;
        try
        {
            var props = Path.Combine(dir, "with-rules.props");
            await File.WriteAllTextAsync(props, $"""
                <Project>
                  <PropertyGroup>
                    <TreatWarningsAsErrors>false</TreatWarningsAsErrors>
                    <IntermediateOutputPath>{dir}/obj/$(MSBuildProjectName)/</IntermediateOutputPath>
                    <OutputPath>{dir}/bin/$(MSBuildProjectName)/</OutputPath>
                    <ErrorLog>{dir}/$(MSBuildProjectName).sarif,version=2.1</ErrorLog>
                  </PropertyGroup>
                  <ItemGroup>
                    <Analyzer Include="{typeof(Rules).Assembly.Location}" />
                  </ItemGroup>
                </Project>
                """);
            var build = Path.Combine(dir, "build.proj");
            await File.WriteAllTextAsync(build, $"""
                <Project>
                  <ItemGroup>
                    {string.Concat(Projects.Select(p => $"<Service Include=\"{Path.Combine(Root, p)}\" />"))}
                  </ItemGroup>
                  <Target Name="Build">
                    <MSBuild Projects="@(Service)" Targets="Build" BuildInParallel="true" Properties="Configuration=Release;CustomAfterDirectoryBuildProps={props}" />
                  </Target>
                </Project>
                """);
            var start = new ProcessStartInfo("dotnet", ["msbuild", build, "-m", "-nologo", "-v:q", "-nr:false"]) { RedirectStandardOutput = true, RedirectStandardError = true };
            using var process = Process.Start(start)!;
            var output = process.StandardOutput.ReadToEndAsync();
            var errors = process.StandardError.ReadToEndAsync();
            using var timeout = CancellationTokenSource.CreateLinkedTokenSource(TestContext.Current.CancellationToken);
            timeout.CancelAfter(TimeSpan.FromMinutes(5));
            await process.WaitForExitAsync(timeout.Token);
            Assert.True(process.ExitCode == 0, $"the build with the rules failed:\n{await output}\n{await errors}");

            var logs = Directory.GetFiles(dir, "*.sarif");
            Assert.Equal(["Catalog.Api", "Frontend.Api", "Gateway", "ServiceDefaults", "Uploads.Api"], logs.Select(Path.GetFileNameWithoutExtension).Order());
            return [.. logs.SelectMany(Read)];
        }
        finally
        {
            Directory.Delete(dir, recursive: true);
        }
    }

    // SARIF 2.1: runs[0].results[] with ruleId, level, the location's file URI and line, and suppressions if any.
    private static IEnumerable<Found> Read(string sarif)
    {
        using var log = JsonDocument.Parse(File.ReadAllText(sarif));
        var found = new List<Found>();
        foreach (var result in log.RootElement.GetProperty("runs")[0].GetProperty("results").EnumerateArray())
        {
            var rule = result.GetProperty("ruleId").GetString()!;
            if (!rule.StartsWith("HP", StringComparison.Ordinal))
            {
                continue;
            }

            var location = result.GetProperty("locations")[0].GetProperty("physicalLocation");
            var file = Path.GetRelativePath(Root, new Uri(location.GetProperty("artifactLocation").GetProperty("uri").GetString()!).LocalPath).Replace('\\', '/');
            var suppressed = result.TryGetProperty("suppressions", out var suppressions) && suppressions.GetArrayLength() > 0;
            found.Add(new Found(rule, file, location.GetProperty("region").GetProperty("startLine").GetInt32(), result.GetProperty("level").GetString()!, suppressed));
        }

        return found;
    }
}
