using System.Collections.Generic;
using System.Linq;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.Diagnostics;
using Microsoft.CodeAnalysis.Operations;

namespace HttpPerf.Analyzers;

/// <summary>
/// HP0008, the Frontend.Grpc lesson: gRPC's receive limit raised above its 4 MB default, or taken off (null), on a
/// client's channel (<c>GrpcChannelOptions</c>) or a server's services (<c>GrpcServiceOptions</c>): what a team does
/// after a large unary message failed with ResourceExhausted. The limit is per message, so a message that needs more
/// is held whole, at both ends, before any of it is used. A constant at or below 4 MB (lowering it, or stating the
/// default) is left alone; a value the compiler cannot know is flagged, since it exists to be raised.
/// Page: docs/pitfalls/Frontend.Grpc.md.
/// </summary>
[DiagnosticAnalyzer(LanguageNames.CSharp)]
public sealed class GrpcAnalyzer() : LessonAnalyzer(Rules.Grpc)
{
    /// <summary>gRPC's default receive limit, client and server alike.</summary>
    public const int DefaultLimit = 4 * 1024 * 1024;

    private static readonly string[] OptionsTypes = ["Grpc.Net.Client.GrpcChannelOptions", "Grpc.AspNetCore.Server.GrpcServiceOptions"];

    protected override void Start(CompilationStartAnalysisContext start)
    {
        var types = OptionsTypes.Select(start.Compilation.GetTypeByMetadataName).OfType<INamedTypeSymbol>().ToList();
        if (types.Count > 0)
        {
            start.RegisterOperationAction(c => Analyze(c, types), OperationKind.SimpleAssignment);
        }
    }

    private static void Analyze(OperationAnalysisContext context, List<INamedTypeSymbol> types)
    {
        var assignment = (ISimpleAssignmentOperation)context.Operation;
        if (assignment.Target is not IPropertyReferenceOperation { Property: { Name: "MaxReceiveMessageSize" } property }
            || !types.Any(t => IsOrDerivesFrom(property.ContainingType, t)))
        {
            return;
        }

        var value = Operations.Unwrap(assignment.Value).ConstantValue;
        var raised = !value.HasValue ? "a value set at run time"
            : value.Value is null ? "no limit"
            : value.Value is int limit && limit > DefaultLimit ? $"{limit:N0} bytes"
            : null;
        if (raised is not null)
        {
            context.ReportDiagnostic(Diagnostic.Create(Rules.Grpc, assignment.Syntax.GetLocation(), raised));
        }
    }

    private static bool IsOrDerivesFrom(INamedTypeSymbol? type, INamedTypeSymbol target)
    {
        for (; type is not null; type = type.BaseType)
        {
            if (SymbolEqualityComparer.Default.Equals(type.OriginalDefinition, target))
            {
                return true;
            }
        }

        return false;
    }
}
