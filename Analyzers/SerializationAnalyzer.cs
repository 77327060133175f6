using System.Linq;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.Diagnostics;
using Microsoft.CodeAnalysis.Operations;

namespace HttpPerf.Analyzers;

/// <summary>
/// HP0002, the Catalog.Serialization lesson (seed 004): MVC's Newtonsoft.Json output formatter with its buffering on
/// (AddNewtonsoftJson, where the same method does not set MvcOptions.SuppressOutputFormatterBuffering), which spools
/// every response to memory and a temp file before the first byte leaves; and a list serialized to one string that is
/// then written as the response.
/// Page: docs/pitfalls/Catalog.Serialization.md.
/// </summary>
[DiagnosticAnalyzer(LanguageNames.CSharp)]
public sealed class SerializationAnalyzer() : LessonAnalyzer(Rules.Serialization)
{
    protected override void Start(CompilationStartAnalysisContext start)
    {
        var types = new Types(start.Compilation);
        start.RegisterOperationAction(c => AnalyzeInvocation(c, types), OperationKind.Invocation);
    }

    private static void AnalyzeInvocation(OperationAnalysisContext context, Types types)
    {
        var invocation = (IInvocationOperation)context.Operation;
        var method = invocation.TargetMethod;
        if (method.Name == "AddNewtonsoftJson" && method.ContainingType.Name.StartsWith("NewtonsoftJsonMvc", System.StringComparison.Ordinal))
        {
            if (!SuppressesBuffering(invocation))
            {
                context.ReportDiagnostic(Diagnostic.Create(Rules.Serialization, invocation.Syntax.GetLocation(),
                    "'AddNewtonsoftJson' makes MVC buffer every response it formats (Newtonsoft.Json writes synchronously): the body is spooled to memory and a temp file, then copied to the socket; serialize with System.Text.Json's async serializer"));
            }

            return;
        }

        var isSerialize = (method.Name == "Serialize" && SymbolEqualityComparer.Default.Equals(method.ContainingType, types.JsonSerializer) && method.ReturnType.SpecialType == SpecialType.System_String)
            || (method.Name == "SerializeObject" && SymbolEqualityComparer.Default.Equals(method.ContainingType, types.JsonConvert));
        if (!isSerialize || Operations.Argument(invocation, 0) is not { } value || !IsCollection(Operations.Unwrap(value).Type))
        {
            return;
        }

        if (Operations.Uses(invocation).Select(Operations.Consumer).Any(c => IsResponseWrite(c, types)))
        {
            context.ReportDiagnostic(Diagnostic.Create(Rules.Serialization, invocation.Syntax.GetLocation(),
                $"'{method.Name}' builds the whole list as one string before the response is written: serialize it into the response (WriteAsJsonAsync, Results.Json)"));
        }
    }

    private static bool SuppressesBuffering(IOperation operation) =>
        Operations.Root(operation).Descendants().OfType<ISimpleAssignmentOperation>().Any(a =>
            Operations.Unwrap(a.Target) is IPropertyReferenceOperation { Property.Name: "SuppressOutputFormatterBuffering" }
            && a.Value.ConstantValue is { HasValue: true, Value: true });

    private static bool IsCollection(ITypeSymbol? type) =>
        type is not null && type.SpecialType != SpecialType.System_String
        && (type is IArrayTypeSymbol || type.AllInterfaces.Any(i => i.SpecialType == SpecialType.System_Collections_IEnumerable));

    // The string written as the body: HttpResponse.WriteAsync, Results/TypedResults.Content or Text, ControllerBase.Content.
    private static bool IsResponseWrite(IOperation? consumer, Types types) => consumer is IInvocationOperation write && write.TargetMethod is var m
        && ((m.Name == "WriteAsync" && SymbolEqualityComparer.Default.Equals(m.ContainingType, types.ResponseWriting))
            || (m.Name is "Content" or "Text" && m.ContainingType is { Name: "Results" or "TypedResults" } t && t.ContainingNamespace.ToDisplayString() == "Microsoft.AspNetCore.Http")
            || (m.Name == "Content" && Operations.IsOrDerives(m.ContainingType, types.ControllerBase)));

    private sealed class Types(Compilation compilation)
    {
        public INamedTypeSymbol? JsonSerializer { get; } = compilation.GetTypeByMetadataName("System.Text.Json.JsonSerializer");
        public INamedTypeSymbol? JsonConvert { get; } = compilation.GetTypeByMetadataName("Newtonsoft.Json.JsonConvert");
        public INamedTypeSymbol? ResponseWriting { get; } = compilation.GetTypeByMetadataName("Microsoft.AspNetCore.Http.HttpResponseWritingExtensions");
        public INamedTypeSymbol? ControllerBase { get; } = compilation.GetTypeByMetadataName("Microsoft.AspNetCore.Mvc.ControllerBase");
    }
}
