using System.Linq;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.Diagnostics;
using Microsoft.CodeAnalysis.Operations;

namespace HttpPerf.Analyzers;

/// <summary>
/// HP0005, the Uploads.Download lesson: File.ReadAllBytes(Async) whose array, or a MemoryStream over it, is what the
/// response sends (Results or TypedResults .File, .Bytes or .Stream, a controller's File, a FileContentResult or
/// FileStreamResult, or a write to the response body).
/// Page: docs/pitfalls/Uploads.Download.md.
/// </summary>
[DiagnosticAnalyzer(LanguageNames.CSharp)]
public sealed class DownloadAnalyzer() : LessonAnalyzer(Rules.Download)
{
    protected override void Start(CompilationStartAnalysisContext start)
    {
        var types = new Types(start.Compilation);
        if (types.HttpResponse is null)
        {
            return;
        }

        start.RegisterOperationAction(c => Analyze(c, types), OperationKind.Invocation);
    }

    private static void Analyze(OperationAnalysisContext context, Types types)
    {
        var read = (IInvocationOperation)context.Operation;
        if (read.TargetMethod.Name is not ("ReadAllBytes" or "ReadAllBytesAsync") || !SymbolEqualityComparer.Default.Equals(read.TargetMethod.ContainingType, types.File))
        {
            return;
        }

        // The array itself, or a MemoryStream over it, handed to what sends it.
        var consumers = Operations.Uses(read).Select(Operations.Consumer).ToList();
        consumers.AddRange(consumers.OfType<IObjectCreationOperation>().Where(c => Operations.IsOrDerives(c.Type, types.MemoryStream))
            .SelectMany(Operations.Uses).Select(Operations.Consumer).ToList());
        if (consumers.FirstOrDefault(c => Sends(c, types)) is { } sink)
        {
            var name = sink switch
            {
                IInvocationOperation invocation => $"'{invocation.TargetMethod.ContainingType.Name}.{invocation.TargetMethod.Name}'",
                IObjectCreationOperation creation => $"'new {creation.Type?.Name}'",
                _ => "the response",
            };
            context.ReportDiagnostic(Diagnostic.Create(Rules.Download, read.Syntax.GetLocation(), read.TargetMethod.Name, name));
        }
    }

    private static bool Sends(IOperation? consumer, Types types) => consumer switch
    {
        IInvocationOperation { TargetMethod: var m } invocation =>
            (m.Name is "File" or "Bytes" or "Stream" && m.ContainingType is { Name: "Results" or "TypedResults" } t && t.ContainingNamespace.ToDisplayString() == "Microsoft.AspNetCore.Http")
            || (m.Name == "File" && Operations.IsOrDerives(m.ContainingType, types.ControllerBase))
            || (m.Name is "Write" or "WriteAsync" && invocation.Instance is { } body
                && (Operations.IsProperty(body, types.HttpResponse, "Body") || Operations.IsProperty(body, types.HttpResponse, "BodyWriter"))),
        IObjectCreationOperation creation => Operations.IsOrDerives(creation.Type, types.FileContentResult) || Operations.IsOrDerives(creation.Type, types.FileStreamResult),
        _ => false,
    };

    private sealed class Types(Compilation compilation)
    {
        public INamedTypeSymbol? File { get; } = compilation.GetTypeByMetadataName("System.IO.File");
        public INamedTypeSymbol? HttpResponse { get; } = compilation.GetTypeByMetadataName("Microsoft.AspNetCore.Http.HttpResponse");
        public INamedTypeSymbol? ControllerBase { get; } = compilation.GetTypeByMetadataName("Microsoft.AspNetCore.Mvc.ControllerBase");
        public INamedTypeSymbol? FileContentResult { get; } = compilation.GetTypeByMetadataName("Microsoft.AspNetCore.Mvc.FileContentResult");
        public INamedTypeSymbol? FileStreamResult { get; } = compilation.GetTypeByMetadataName("Microsoft.AspNetCore.Mvc.FileStreamResult");
        public INamedTypeSymbol? MemoryStream { get; } = compilation.GetTypeByMetadataName("System.IO.MemoryStream");
    }
}
