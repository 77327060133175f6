using System.Linq;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.Diagnostics;
using Microsoft.CodeAnalysis.Operations;

namespace HttpPerf.Analyzers;

/// <summary>
/// HP0007, the Frontend.Replicas lesson (the Aspire template's client defaults): AddStandardResilienceHandler on a
/// client builder that also has AddServiceDiscovery, in the same method or lambda, with no hedging there. Info: it
/// is the right default for a dependency with one replica, or calls that must not be sent twice.
/// Page: docs/pitfalls/Frontend.Replicas.md.
/// </summary>
[DiagnosticAnalyzer(LanguageNames.CSharp)]
public sealed class ReplicasAnalyzer() : LessonAnalyzer(Rules.Replicas)
{
    protected override void Start(CompilationStartAnalysisContext start)
    {
        var clientBuilder = start.Compilation.GetTypeByMetadataName("Microsoft.Extensions.DependencyInjection.IHttpClientBuilder");
        if (clientBuilder is null)
        {
            return;
        }

        start.RegisterOperationAction(c => Analyze(c, clientBuilder), OperationKind.Invocation);
    }

    private static void Analyze(OperationAnalysisContext context, INamedTypeSymbol clientBuilder)
    {
        var invocation = (IInvocationOperation)context.Operation;
        if (invocation.TargetMethod.Name != "AddStandardResilienceHandler" || !IsOnClientBuilder(invocation, clientBuilder))
        {
            return;
        }

        var calls = Operations.Scope(invocation).Descendants().OfType<IInvocationOperation>().Where(i => IsOnClientBuilder(i, clientBuilder)).Select(i => i.TargetMethod.Name).ToList();
        if (calls.Contains("AddServiceDiscovery") && !calls.Any(name => name.Contains("Hedging")))
        {
            context.ReportDiagnostic(Diagnostic.Create(Rules.Replicas, invocation.Syntax.GetLocation(), invocation.TargetMethod.Name));
        }
    }

    private static bool IsOnClientBuilder(IInvocationOperation invocation, INamedTypeSymbol clientBuilder) =>
        Operations.Receiver(invocation) is { Type: { } type } && (SymbolEqualityComparer.Default.Equals(type, clientBuilder) || type.AllInterfaces.Contains(clientBuilder, SymbolEqualityComparer.Default));
}
