using System.Collections.Immutable;
using System.Linq;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.Diagnostics;
using Microsoft.CodeAnalysis.Operations;

namespace HttpPerf.Analyzers;

/// <summary>
/// HP0001, the Frontend.CatalogClient lesson (seeds 000 and 001): a response read whole as a string or bytes and then
/// deserialized, and a GetAsync/SendAsync without ResponseHeadersRead whose content is then deserialized (HttpClient
/// buffers the whole body before it returns). Left alone: a read whose method checks the response's Content-Length
/// first, or caps MaxResponseContentBufferSize (a small response read on purpose), and one deserialized into a type that
/// cannot grow: no collection, JSON DOM, object or type parameter in it, one level down (a policy answer, a user: the
/// false positives of the run over outside code, docs/analyzers.md).
/// Page: docs/pitfalls/Frontend.CatalogClient.md.
/// </summary>
[DiagnosticAnalyzer(LanguageNames.CSharp)]
public sealed class CatalogClientAnalyzer() : LessonAnalyzer(Rules.CatalogClient)
{
    private static readonly string[] WholeReads = ["ReadAsStringAsync", "ReadAsByteArrayAsync", "GetStringAsync", "GetByteArrayAsync"];
    private static readonly string[] StreamedReads = ["ReadFromJsonAsync", "ReadFromJsonAsAsyncEnumerable", "ReadAsStreamAsync"];

    protected override void Start(CompilationStartAnalysisContext start)
    {
        var types = new Types(start.Compilation);
        if (types.HttpClient is null)
        {
            return;
        }

        start.RegisterOperationAction(c => AnalyzeDeserialize(c, types), OperationKind.Invocation);
        start.RegisterOperationAction(c => AnalyzeSend(c, types), OperationKind.Invocation);
    }

    // JsonSerializer.Deserialize(json) / JsonConvert.DeserializeObject(json), where json is a whole read of a response.
    private static void AnalyzeDeserialize(OperationAnalysisContext context, Types types)
    {
        var invocation = (IInvocationOperation)context.Operation;
        var method = invocation.TargetMethod;
        var isDeserialize = (method.Name == "Deserialize" && SymbolEqualityComparer.Default.Equals(method.ContainingType, types.JsonSerializer))
            || (method.Name == "DeserializeObject" && SymbolEqualityComparer.Default.Equals(method.ContainingType, types.JsonConvert));
        if (!isDeserialize || Operations.Argument(invocation, 0) is not { } json || HasSizeGuard(invocation, types) || !MayBeLarge(invocation.Type, 1))
        {
            return;
        }

        foreach (var origin in Operations.Origins(json))
        {
            if (origin is IInvocationOperation read && WholeReads.Contains(read.TargetMethod.Name)
                && (Operations.IsOrDerives(read.TargetMethod.ContainingType, types.HttpContent) || Operations.IsOrDerives(read.TargetMethod.ContainingType, types.HttpClient)))
            {
                var fix = ReadFromJsonApplies(invocation, read, json, types)
                    ? ImmutableDictionary<string, string?>.Empty.Add(RuleIds.FixKey, RuleIds.FixReadFromJson)
                    : ImmutableDictionary<string, string?>.Empty;
                // Reported on the Deserialize call (the operation analyzed, so the IDE can offer the fix), the read its
                // additional location (where the fix starts).
                context.ReportDiagnostic(Diagnostic.Create(Rules.CatalogClient, invocation.Syntax.GetLocation(), [read.Syntax.GetLocation()], fix,
                    read.TargetMethod.Name, $"'{method.Name}' parses it", "ReadFromJsonAsync, or DeserializeAsyncEnumerable over ReadAsStreamAsync"));
            }
        }
    }

    // HttpClient.GetAsync/SendAsync without a completion option, whose response's content is then read as JSON or a stream.
    private static void AnalyzeSend(OperationAnalysisContext context, Types types)
    {
        var invocation = (IInvocationOperation)context.Operation;
        var method = invocation.TargetMethod;
        if (method.Name is not ("GetAsync" or "SendAsync") || !Operations.IsOrDerives(method.ContainingType, types.HttpClient)
            || method.Parameters.Any(p => SymbolEqualityComparer.Default.Equals(p.Type, types.HttpCompletionOption))
            || Operations.StoredIn(invocation) is not { } response)
        {
            return;
        }

        var readsContent = Operations.Root(invocation).Descendants().OfType<IInvocationOperation>().Any(read =>
            StreamedReads.Contains(read.TargetMethod.Name)
            && (read.TargetMethod.Name != "ReadFromJsonAsync" || !read.TargetMethod.IsGenericMethod || MayBeLarge(read.TargetMethod.TypeArguments[0], 1))
            && Operations.Receiver(read) is { } content
            && Operations.Unwrap(content) is IPropertyReferenceOperation { Property.Name: "Content", Instance: { } owner }
            && Operations.Unwrap(owner) is ILocalReferenceOperation local && SymbolEqualityComparer.Default.Equals(local.Local, response));
        if (!readsContent)
        {
            return;
        }

        var fix = IsUsing(response, invocation)
            ? ImmutableDictionary<string, string?>.Empty.Add(RuleIds.FixKey, RuleIds.FixResponseHeadersRead)
            : ImmutableDictionary<string, string?>.Empty;
        context.ReportDiagnostic(Diagnostic.Create(Rules.CatalogClient, invocation.Syntax.GetLocation(), fix,
            method.Name, "its content is deserialized (HttpClient's default, ResponseContentRead, buffers the body first)", "pass HttpCompletionOption.ResponseHeadersRead and dispose the response"));
    }

    // A body that can grow: a collection, object, a JSON DOM, a type parameter, or a type with such a public property.
    private static bool MayBeLarge(ITypeSymbol? type, int depth)
    {
        if (type is null || type is ITypeParameterSymbol || type.SpecialType == SpecialType.System_Object || type is IArrayTypeSymbol || type.TypeKind == TypeKind.Error)
        {
            return true;
        }

        if (type.SpecialType == SpecialType.System_String || (type.IsValueType && type.ContainingNamespace?.ToDisplayString() == "System"))
        {
            return false;
        }

        if (type.AllInterfaces.Any(i => i.SpecialType == SpecialType.System_Collections_IEnumerable) || type.Name is "JsonElement" or "JsonDocument" or "JsonNode" or "JObject" or "JToken")
        {
            return true;
        }

        return depth > 0 && type.GetMembers().OfType<IPropertySymbol>().Any(p => !p.IsStatic && p.DeclaredAccessibility == Accessibility.Public && MayBeLarge(p.Type, depth - 1));
    }

    // A Content-Length compared, or a cap on what the client may buffer: a small response read whole on purpose.
    private static bool HasSizeGuard(IOperation operation, Types types) =>
        Operations.Root(operation).Descendants().Any(o =>
            (o is IBinaryOperation { OperatorKind: BinaryOperatorKind.GreaterThan or BinaryOperatorKind.GreaterThanOrEqual or BinaryOperatorKind.LessThan or BinaryOperatorKind.LessThanOrEqual } compare
                && (IsContentLength(compare.LeftOperand, types) || IsContentLength(compare.RightOperand, types)))
            || (o is IPropertyReferenceOperation { Property.Name: "MaxResponseContentBufferSize" } cap && cap.Parent is ISimpleAssignmentOperation assignment && assignment.Target == cap));

    private static bool IsContentLength(IOperation operand, Types types)
    {
        var value = Operations.Unwrap(operand);
        if (value is ICoalesceOperation coalesce)
        {
            value = Operations.Unwrap(coalesce.Value);
        }

        return Operations.IsProperty(value, types.HttpContentHeaders, "ContentLength") || Operations.IsProperty(value, types.HttpContent, "ContentLength");
    }

    // The rewrite to ReadFromJsonAsync is mechanical when System.Text.Json deserializes HttpContent.ReadAsStringAsync's
    // string, used nowhere else, with no options or with options or type info a ReadFromJsonAsync overload takes.
    private static bool ReadFromJsonApplies(IInvocationOperation deserialize, IInvocationOperation read, IOperation json, Types types) =>
        SymbolEqualityComparer.Default.Equals(deserialize.TargetMethod.ContainingType, types.JsonSerializer)
        && read.TargetMethod.Name == "ReadAsStringAsync" && Operations.IsOrDerives(read.TargetMethod.ContainingType, types.HttpContent)
        && deserialize.TargetMethod.Parameters.Length <= 2
        && deserialize.TargetMethod.Parameters[0].Type.SpecialType == SpecialType.System_String
        && (deserialize.TargetMethod.Parameters.Length == 1 || deserialize.TargetMethod.Parameters[1].Type.Name is "JsonSerializerOptions" or "JsonTypeInfo")
        && (deserialize.TargetMethod.IsGenericMethod || deserialize.TargetMethod.Parameters.Length == 2 && deserialize.TargetMethod.Parameters[1].Type.Name == "JsonTypeInfo")
        && (Operations.Unwrap(json) is not ILocalReferenceOperation local || (Operations.Uses(read).Count() == 1 && Operations.AssignedTo(local.Local, Operations.Root(read)).Count() == 1));

    private static bool IsUsing(ILocalSymbol response, IOperation operation) =>
        Operations.Root(operation).Descendants().OfType<IVariableDeclaratorOperation>().Any(d =>
            SymbolEqualityComparer.Default.Equals(d.Symbol, response)
            && d.Parent is IVariableDeclarationOperation { Parent: IVariableDeclarationGroupOperation { Parent: IUsingDeclarationOperation or IUsingOperation } });

    private sealed class Types(Compilation compilation)
    {
        public INamedTypeSymbol? HttpClient { get; } = compilation.GetTypeByMetadataName("System.Net.Http.HttpClient");
        public INamedTypeSymbol? HttpContent { get; } = compilation.GetTypeByMetadataName("System.Net.Http.HttpContent");
        public INamedTypeSymbol? HttpContentHeaders { get; } = compilation.GetTypeByMetadataName("System.Net.Http.Headers.HttpContentHeaders");
        public INamedTypeSymbol? HttpCompletionOption { get; } = compilation.GetTypeByMetadataName("System.Net.Http.HttpCompletionOption");
        public INamedTypeSymbol? JsonSerializer { get; } = compilation.GetTypeByMetadataName("System.Text.Json.JsonSerializer");
        public INamedTypeSymbol? JsonConvert { get; } = compilation.GetTypeByMetadataName("Newtonsoft.Json.JsonConvert");
    }
}
