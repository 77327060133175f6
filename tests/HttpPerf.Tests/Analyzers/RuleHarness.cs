using System.Collections.Immutable;
using Microsoft.AspNetCore.Http;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CodeFixes;
using Microsoft.CodeAnalysis.CSharp.Testing;
using Microsoft.CodeAnalysis.Diagnostics;
using Microsoft.CodeAnalysis.Testing;

namespace HttpPerf.Tests.Analyzers;

/// <summary>
/// Runs a rule (and its fix) over a snippet with Microsoft.CodeAnalysis.Testing. The snippet compiles against the .NET
/// and ASP.NET Core shared frameworks this test runs on, read from disk, so nothing is downloaded; Newtonsoft.Json's,
/// the resilience handler's, service discovery's and gRPC's few entry points are stubbed (<see cref="Stubs"/>), since the rules
/// know them by name. Expected diagnostics are marked in the snippet: <c>{|HP0001:...|}</c>.
/// </summary>
internal static class RuleHarness
{
    private static readonly Lazy<ImmutableArray<MetadataReference>> Framework = new(() =>
    [
        .. new[] { typeof(object), typeof(HttpContext) }
            .Select(t => Path.GetDirectoryName(t.Assembly.Location)!)
            .SelectMany(dir => Directory.EnumerateFiles(dir, "*.dll"))
            .Where(IsManaged)
            .Select(path => (MetadataReference)MetadataReference.CreateFromFile(path)),
    ]);

    public static Task AnalyzeAsync<TAnalyzer>(string source)
        where TAnalyzer : DiagnosticAnalyzer, new()
    {
        var test = new CSharpAnalyzerTest<TAnalyzer, DefaultVerifier> { TestCode = source };
        Configure(test.TestState);
        return test.RunAsync(TestContext.Current.CancellationToken);
    }

    public static Task FixAsync<TAnalyzer, TFix>(string source, string fixedSource)
        where TAnalyzer : DiagnosticAnalyzer, new()
        where TFix : CodeFixProvider, new()
    {
        var test = new CSharpCodeFixTest<TAnalyzer, TFix, DefaultVerifier> { TestCode = source, FixedCode = fixedSource };
        Configure(test.TestState);
        Configure(test.FixedState);
        return test.RunAsync(TestContext.Current.CancellationToken);
    }

    private static void Configure(SolutionState state)
    {
        state.ReferenceAssemblies = new ReferenceAssemblies("net10.0");
        state.AdditionalReferences.AddRange(Framework.Value);
        state.Sources.Add(("Stubs.cs", Stubs));
    }

    private static bool IsManaged(string path)
    {
        try
        {
            System.Reflection.AssemblyName.GetAssemblyName(path);
            return true;
        }
        catch (BadImageFormatException)
        {
            return false;
        }
    }

    /// <summary>The packages' entry points the rules look for, as the packages declare them.</summary>
    private const string Stubs = """
        namespace Newtonsoft.Json
        {
            public static class JsonConvert
            {
                public static T DeserializeObject<T>(string value) => default;
                public static string SerializeObject(object value) => "";
            }
        }

        namespace Grpc.Net.Client
        {
            public sealed class GrpcChannelOptions
            {
                public int? MaxReceiveMessageSize { get; set; }
                public int? MaxSendMessageSize { get; set; }
            }
        }

        namespace Grpc.AspNetCore.Server
        {
            public class GrpcServiceOptions
            {
                public int? MaxReceiveMessageSize { get; set; }
            }

            public class GrpcServiceOptions<TService> : GrpcServiceOptions
            {
            }
        }

        namespace Microsoft.Extensions.DependencyInjection
        {
            public static class NewtonsoftJsonMvcBuilderExtensions
            {
                public static IMvcBuilder AddNewtonsoftJson(this IMvcBuilder builder) => builder;
            }

            public static class ResilienceHttpClientBuilderExtensions
            {
                public static IHttpClientBuilder AddStandardResilienceHandler(this IHttpClientBuilder builder) => builder;
                public static IHttpClientBuilder AddStandardHedgingHandler(this IHttpClientBuilder builder) => builder;
            }

            public static class ServiceDiscoveryHttpClientBuilderExtensions
            {
                public static IHttpClientBuilder AddServiceDiscovery(this IHttpClientBuilder builder) => builder;
            }
        }
        """;
}
