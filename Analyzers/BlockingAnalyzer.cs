using System.Collections.Generic;
using System.Collections.Immutable;
using System.Linq;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.Diagnostics;
using Microsoft.CodeAnalysis.Operations;

namespace HttpPerf.Analyzers;

/// <summary>
/// HP0009, the Frontend.Blocking lesson: a thread held through HTTP I/O. Three shapes: a synchronous wait
/// (<c>.Result</c>, <c>.Wait()</c>, <c>.GetAwaiter().GetResult()</c>) on a task an HttpClient, HttpContent or Stream
/// method returned; a synchronous read of an HTTP body (<c>HttpContent.ReadAsStream()</c>, and <c>Read</c>,
/// <c>CopyTo</c> and their kin on a stream that came from one, or from a request's <c>Body</c>); and
/// <c>AllowSynchronousIO = true</c>. The awaited forms are left alone. In an async function the first two rewrite
/// mechanically to <c>await</c> (the diagnostic names the fix); elsewhere the caller has to become async first.
/// Page: docs/pitfalls/Frontend.Blocking.md.
/// </summary>
[DiagnosticAnalyzer(LanguageNames.CSharp)]
public sealed class BlockingAnalyzer() : LessonAnalyzer(Rules.Blocking)
{
    /// <summary>The task-returning methods of Stream, whose tasks are the network's when the stream is a body.</summary>
    private static readonly string[] StreamTasks = ["ReadAsync", "WriteAsync", "CopyToAsync", "FlushAsync", "ReadAtLeastAsync", "ReadExactlyAsync"];

    /// <summary>Stream's synchronous reads.</summary>
    private static readonly string[] SyncReads = ["Read", "ReadByte", "ReadAtLeast", "ReadExactly", "CopyTo"];

    private static readonly ImmutableDictionary<string, string?> Fixable = ImmutableDictionary<string, string?>.Empty.Add(RuleIds.FixKey, RuleIds.FixAwait);

    protected override void Start(CompilationStartAnalysisContext start)
    {
        var types = new Types(
            start.Compilation.GetTypeByMetadataName("System.Net.Http.HttpMessageInvoker"),
            start.Compilation.GetTypeByMetadataName("System.Net.Http.HttpContent"),
            start.Compilation.GetTypeByMetadataName("System.IO.Stream"),
            start.Compilation.GetTypeByMetadataName("Microsoft.AspNetCore.Http.HttpRequest"),
            [.. new[] { "System.Threading.Tasks.Task", "System.Threading.Tasks.Task`1", "System.Threading.Tasks.ValueTask", "System.Threading.Tasks.ValueTask`1" }
                .Select(start.Compilation.GetTypeByMetadataName).OfType<INamedTypeSymbol>()]);
        if (types.Content is null || types.Stream is null)
        {
            return;
        }

        start.RegisterOperationAction(c => AnalyzeResult(c, types), OperationKind.PropertyReference);
        start.RegisterOperationAction(c => AnalyzeCall(c, types), OperationKind.Invocation);
        start.RegisterOperationAction(AnalyzeAssignment, OperationKind.SimpleAssignment);
    }

    private sealed class Types(INamedTypeSymbol? invoker, INamedTypeSymbol? content, INamedTypeSymbol? stream, INamedTypeSymbol? request, IReadOnlyList<INamedTypeSymbol> tasks)
    {
        public INamedTypeSymbol? Invoker { get; } = invoker;

        public INamedTypeSymbol? Content { get; } = content;

        public INamedTypeSymbol? Stream { get; } = stream;

        public INamedTypeSymbol? Request { get; } = request;

        public IReadOnlyList<INamedTypeSymbol> Tasks { get; } = tasks;
    }

    // task.Result
    private static void AnalyzeResult(OperationAnalysisContext context, Types types)
    {
        var property = (IPropertyReferenceOperation)context.Operation;
        if (property.Property.Name == "Result" && property.Instance is { } task && IsTask(property.Property.ContainingType, types) && HttpTask(task, types) is { } method)
        {
            Report(context, property, $"'.Result' on {method}");
        }
    }

    private static void AnalyzeCall(OperationAnalysisContext context, Types types)
    {
        var call = (IInvocationOperation)context.Operation;
        var method = call.TargetMethod;
        switch (method.Name)
        {
            // task.Wait()
            case "Wait" when call.Instance is { } task && IsTask(method.ContainingType, types) && HttpTask(task, types) is { } source:
                context.ReportDiagnostic(Diagnostic.Create(Rules.Blocking, call.Syntax.GetLocation(), $"'.Wait()' on {source}"));
                break;
            // task.GetAwaiter().GetResult(), task.ConfigureAwait(false).GetAwaiter().GetResult()
            case "GetResult" when call.Instance is IInvocationOperation { TargetMethod.Name: "GetAwaiter", Instance: { } task } && HttpTask(task, types) is { } source:
                Report(context, call, $"'.GetAwaiter().GetResult()' on {source}");
                break;
            // content.ReadAsStream()
            case "ReadAsStream" when Operations.IsOrDerives(method.ContainingType, types.Content):
                Report(context, call, "HttpContent.ReadAsStream() reads the body synchronously");
                break;
            // body.Read(...), body.CopyTo(...) on a response's or a request's body
            case var name when SyncReads.Contains(name) && Operations.IsOrDerives(method.ContainingType, types.Stream) && call.Instance is { } stream && IsHttpBody(stream, types):
                context.ReportDiagnostic(Diagnostic.Create(Rules.Blocking, call.Syntax.GetLocation(), $"Stream.{name} on an HTTP body"));
                break;
        }
    }

    // options.AllowSynchronousIO = true (Kestrel, IIS, IHttpBodyControlFeature)
    private static void AnalyzeAssignment(OperationAnalysisContext context)
    {
        var assignment = (ISimpleAssignmentOperation)context.Operation;
        if (assignment.Target is IPropertyReferenceOperation { Property.Name: "AllowSynchronousIO" }
            && Operations.Unwrap(assignment.Value).ConstantValue is { HasValue: true, Value: true })
        {
            context.ReportDiagnostic(Diagnostic.Create(Rules.Blocking, assignment.Syntax.GetLocation(), "AllowSynchronousIO = true lets every body be read and written synchronously"));
        }
    }

    /// <summary>Reports <paramref name="operation"/>, with the await fix when it sits in an async function.</summary>
    private static void Report(OperationAnalysisContext context, IOperation operation, string what) =>
        context.ReportDiagnostic(Diagnostic.Create(Rules.Blocking, operation.Syntax.GetLocation(), IsInAsyncFunction(context) ? Fixable : null, what));

    private static bool IsInAsyncFunction(OperationAnalysisContext context) => context.ContainingSymbol is IMethodSymbol { IsAsync: true }
        && !HasLambdaBetween(context.Operation);

    // A lambda or local function inside the async method has its own asyncness: leave the fix out there.
    private static bool HasLambdaBetween(IOperation operation) => Operations.Scope(operation) is IAnonymousFunctionOperation or ILocalFunctionOperation;

    private static bool IsTask(INamedTypeSymbol type, Types types) => types.Tasks.Any(t => SymbolEqualityComparer.Default.Equals(type.OriginalDefinition, t));

    /// <summary>"HttpClient.GetAsync" when <paramref name="task"/> came from an HttpClient, HttpContent or Stream method; else null.</summary>
    private static string? HttpTask(IOperation task, Types types)
    {
        foreach (var origin in Operations.Origins(task))
        {
            if (origin is IInvocationOperation call && Operations.Receiver(call) is { } receiver && receiver.Type is { } type
                && (Operations.IsOrDerives(type, types.Invoker) || Operations.IsOrDerives(type, types.Content)
                    || (Operations.IsOrDerives(type, types.Stream) && StreamTasks.Contains(call.TargetMethod.Name))))
            {
                return $"{type.Name}.{call.TargetMethod.Name}";
            }
        }

        return null;
    }

    /// <summary>True when <paramref name="stream"/> came from an HttpContent's stream or is a request's <c>Body</c>.</summary>
    private static bool IsHttpBody(IOperation stream, Types types) => Operations.Origins(stream).Any(origin =>
        (origin is IInvocationOperation { TargetMethod.Name: "ReadAsStream" or "ReadAsStreamAsync" } call && Operations.IsOrDerives(call.TargetMethod.ContainingType, types.Content))
        || Operations.IsProperty(origin, types.Request, "Body"));
}
