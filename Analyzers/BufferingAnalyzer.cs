using System.Linq;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.Diagnostics;
using Microsoft.CodeAnalysis.Operations;

namespace HttpPerf.Analyzers;

/// <summary>
/// HP0006, the Gateway.Buffering lesson: a middleware (code that calls the next RequestDelegate) that holds bodies
/// whole: Request.EnableBuffering(), the request body copied into a MemoryStream, or the response body swapped for a
/// MemoryStream. A middleware runs on every request, so every body pays.
/// Page: docs/pitfalls/Gateway.Buffering.md.
/// </summary>
[DiagnosticAnalyzer(LanguageNames.CSharp)]
public sealed class BufferingAnalyzer() : LessonAnalyzer(Rules.Buffering)
{
    protected override void Start(CompilationStartAnalysisContext start)
    {
        var types = new Types(start.Compilation);
        if (types.HttpRequest is null)
        {
            return;
        }

        start.RegisterOperationAction(c => AnalyzeCall(c, types), OperationKind.Invocation);
        start.RegisterOperationAction(c => AnalyzeAssignment(c, types), OperationKind.SimpleAssignment);
    }

    // context.Request.EnableBuffering(), and context.Request.Body.CopyTo(Async)(memoryStream).
    private static void AnalyzeCall(OperationAnalysisContext context, Types types)
    {
        var invocation = (IInvocationOperation)context.Operation;
        var method = invocation.TargetMethod;
        var buffers = (method.Name == "EnableBuffering" && Operations.Receiver(invocation) is { } request && Operations.IsOrDerives(request.Type, types.HttpRequest))
            || (method.Name is "CopyTo" or "CopyToAsync" && invocation.Instance is { } body && Operations.IsProperty(body, types.HttpRequest, "Body")
                && Operations.Argument(invocation, 0) is { } target && Operations.IsOrDerives(Operations.Unwrap(target).Type, types.MemoryStream));
        if (buffers && IsMiddleware(invocation, types))
        {
            context.ReportDiagnostic(Diagnostic.Create(Rules.Buffering, invocation.Syntax.GetLocation(), $"'{method.Name}'"));
        }
    }

    // context.Response.Body = new MemoryStream() (or a MemoryStream local).
    private static void AnalyzeAssignment(OperationAnalysisContext context, Types types)
    {
        var assignment = (ISimpleAssignmentOperation)context.Operation;
        if (Operations.IsProperty(assignment.Target, types.HttpResponse, "Body")
            && Operations.IsOrDerives(Operations.Unwrap(assignment.Value).Type, types.MemoryStream)
            && IsMiddleware(assignment, types))
        {
            context.ReportDiagnostic(Diagnostic.Create(Rules.Buffering, assignment.Syntax.GetLocation(), "A MemoryStream as the response body"));
        }
    }

    // The call's method (or lambda) invokes a RequestDelegate, or a delegate parameter named next: it wraps the pipeline.
    private static bool IsMiddleware(IOperation operation, Types types) =>
        Operations.Scope(operation).Descendants().OfType<IInvocationOperation>().Any(i =>
            i.TargetMethod.MethodKind == MethodKind.DelegateInvoke
            && (SymbolEqualityComparer.Default.Equals(i.TargetMethod.ContainingType, types.RequestDelegate)
                || (i.Instance is { } target && Operations.Unwrap(target) is IParameterReferenceOperation { Parameter.Name: "next" })));

    private sealed class Types(Compilation compilation)
    {
        public INamedTypeSymbol? HttpRequest { get; } = compilation.GetTypeByMetadataName("Microsoft.AspNetCore.Http.HttpRequest");
        public INamedTypeSymbol? HttpResponse { get; } = compilation.GetTypeByMetadataName("Microsoft.AspNetCore.Http.HttpResponse");
        public INamedTypeSymbol? RequestDelegate { get; } = compilation.GetTypeByMetadataName("Microsoft.AspNetCore.Http.RequestDelegate");
        public INamedTypeSymbol? MemoryStream { get; } = compilation.GetTypeByMetadataName("System.IO.MemoryStream");
    }
}
