using System.Linq;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.Diagnostics;
using Microsoft.CodeAnalysis.Operations;

namespace HttpPerf.Analyzers;

/// <summary>
/// HP0003, the Catalog.WriteStrategy lesson (seed 003): a Flush or FlushAsync (of a Stream, PipeWriter, TextWriter or
/// Utf8JsonWriter) on every pass of a loop, in a method that writes an HTTP response. A flush under a condition inside
/// the loop (the fix: when enough bytes wait) or after it is not one; nor is a method that sends server-sent events, or
/// a loop that waits between passes (Task.Delay, PeriodicTimer): both send each item as it happens, on purpose.
/// Page: docs/pitfalls/Catalog.WriteStrategy.md.
/// </summary>
[DiagnosticAnalyzer(LanguageNames.CSharp)]
public sealed class WriteStrategyAnalyzer() : LessonAnalyzer(Rules.WriteStrategy)
{
    protected override void Start(CompilationStartAnalysisContext start)
    {
        var compilation = start.Compilation;
        INamedTypeSymbol?[] writers =
        [
            compilation.GetTypeByMetadataName("System.IO.Stream"),
            compilation.GetTypeByMetadataName("System.IO.Pipelines.PipeWriter"),
            compilation.GetTypeByMetadataName("System.IO.TextWriter"),
            compilation.GetTypeByMetadataName("System.Text.Json.Utf8JsonWriter"),
        ];
        var response = compilation.GetTypeByMetadataName("Microsoft.AspNetCore.Http.HttpResponse");
        if (response is null)
        {
            return;
        }

        start.RegisterOperationAction(c => Analyze(c, writers, response), OperationKind.Invocation);
    }

    private static void Analyze(OperationAnalysisContext context, INamedTypeSymbol?[] writers, INamedTypeSymbol response)
    {
        var invocation = (IInvocationOperation)context.Operation;
        if (invocation.TargetMethod.Name is not ("Flush" or "FlushAsync") || invocation.Instance is not { } writer
            || !writers.Any(w => Operations.IsOrDerives(writer.Type, w))
            || InLoopEveryPass(invocation) is not { } loop)
        {
            return;
        }

        var scope = Operations.Scope(invocation);
        var writesResponse = scope.DescendantsAndSelf().Any(o => SymbolEqualityComparer.Default.Equals(o.Type, response));
        var sendsEvents = scope.DescendantsAndSelf().Any(o => o.ConstantValue is { HasValue: true, Value: string s } && s.StartsWith("text/event-stream", System.StringComparison.OrdinalIgnoreCase));
        // A paced loop (it waits between passes: Task.Delay, a PeriodicTimer) sends each item as it happens, like events.
        var paced = loop.Body.Descendants().OfType<IInvocationOperation>().Any(i =>
            (i.TargetMethod.Name == "Delay" && i.TargetMethod.ContainingType.ToDisplayString() == "System.Threading.Tasks.Task")
            || (i.TargetMethod.Name == "WaitForNextTickAsync" && i.TargetMethod.ContainingType.Name == "PeriodicTimer"));
        if (writesResponse && !sendsEvents && !paced)
        {
            context.ReportDiagnostic(Diagnostic.Create(Rules.WriteStrategy, invocation.Syntax.GetLocation(), invocation.TargetMethod.Name));
        }
    }

    // Inside a loop's body, with no condition, switch, lambda or local function between the call and the loop.
    private static ILoopOperation? InLoopEveryPass(IOperation operation)
    {
        for (IOperation? child = operation, parent = operation.Parent; parent is not null; child = parent, parent = parent.Parent)
        {
            switch (parent)
            {
                case IConditionalOperation or ISwitchOperation or ISwitchExpressionOperation or ICoalesceOperation or IConditionalAccessOperation
                    or IAnonymousFunctionOperation or ILocalFunctionOperation:
                    return null;
                case ILoopOperation loop:
                    return loop.Body == child ? loop : null;
            }
        }

        return null;
    }
}
