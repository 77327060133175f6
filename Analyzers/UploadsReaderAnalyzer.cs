using System.Linq;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.Diagnostics;
using Microsoft.CodeAnalysis.Operations;

namespace HttpPerf.Analyzers;

/// <summary>
/// HP0004, the Uploads.Reader lesson (seed 002): an upload read as a form. An IFormFile, IFormFileCollection (or a
/// list or array of IFormFile) bound as an endpoint's or a controller action's parameter, or as a property of a
/// [FromForm] or [AsParameters] parameter's type, and ReadFormAsync or
/// Request.Form in a method that then takes the form's Files: the whole body is buffered before the handler sees a
/// file. A form read for its fields alone is small and left alone.
/// Page: docs/pitfalls/Uploads.Reader.md.
/// </summary>
[DiagnosticAnalyzer(LanguageNames.CSharp)]
public sealed class UploadsReaderAnalyzer() : LessonAnalyzer(Rules.UploadsReader)
{
    protected override void Start(CompilationStartAnalysisContext start)
    {
        var types = new Types(start.Compilation);
        if (types.FormFile is null)
        {
            return;
        }

        start.RegisterOperationAction(c => AnalyzeFormRead(c, types), OperationKind.Invocation, OperationKind.PropertyReference);
        start.RegisterOperationAction(c => AnalyzeEndpoint(c, types), OperationKind.Invocation);
        start.RegisterSymbolAction(c => AnalyzeAction(c, types), SymbolKind.Method);
    }

    // ReadFormAsync() or Request.Form, where the method goes on to the form's files.
    private static void AnalyzeFormRead(OperationAnalysisContext context, Types types)
    {
        var (name, isFormRead) = context.Operation switch
        {
            IInvocationOperation invocation => ("ReadFormAsync", invocation.TargetMethod.Name == "ReadFormAsync" && Operations.IsOrDerives(invocation.TargetMethod.ContainingType, types.HttpRequest)),
            IPropertyReferenceOperation property => ("Request.Form", property.Property.Name == "Form" && Operations.IsOrDerives(property.Property.ContainingType, types.HttpRequest)),
            _ => ("", false),
        };
        var takesFiles = isFormRead && Operations.Root(context.Operation).Descendants().OfType<IPropertyReferenceOperation>()
            .Any(p => p.Property.Name == "Files" && Operations.IsOrDerives(p.Property.ContainingType, types.FormCollection));
        if (takesFiles)
        {
            context.ReportDiagnostic(Diagnostic.Create(Rules.UploadsReader, context.Operation.Syntax.GetLocation(), $"'{name}'"));
        }
    }

    // app.MapPost("/upload", (IFormFile file) => ...) and the same with a method group.
    private static void AnalyzeEndpoint(OperationAnalysisContext context, Types types)
    {
        var invocation = (IInvocationOperation)context.Operation;
        if (!invocation.TargetMethod.Name.StartsWith("Map", System.StringComparison.Ordinal)
            || !Operations.IsOrDerives(invocation.TargetMethod.ContainingType, types.EndpointRouteBuilderExtensions))
        {
            return;
        }

        foreach (var argument in invocation.Arguments)
        {
            var handler = Operations.Unwrap(argument.Value) switch
            {
                IDelegateCreationOperation { Target: IAnonymousFunctionOperation lambda } => lambda.Symbol,
                IDelegateCreationOperation { Target: IMethodReferenceOperation reference } => reference.Method,
                IAnonymousFunctionOperation lambda => lambda.Symbol,
                _ => null,
            };
            foreach (var parameter in handler?.Parameters ?? [])
            {
                if (BindsFile(parameter, types))
                {
                    var location = handler!.MethodKind == MethodKind.AnonymousFunction ? parameter.Locations.FirstOrDefault() : argument.Syntax.GetLocation();
                    context.ReportDiagnostic(Diagnostic.Create(Rules.UploadsReader, location ?? argument.Syntax.GetLocation(), $"Binding '{parameter.Type.ToDisplayString(SymbolDisplayFormat.MinimallyQualifiedFormat)} {parameter.Name}'"));
                }
            }
        }
    }

    // A controller action's IFormFile parameter.
    private static void AnalyzeAction(SymbolAnalysisContext context, Types types)
    {
        var method = (IMethodSymbol)context.Symbol;
        if (method.MethodKind != MethodKind.Ordinary || method.DeclaredAccessibility != Accessibility.Public || method.IsStatic
            || !Operations.IsOrDerives(method.ContainingType, types.ControllerBase))
        {
            return;
        }

        foreach (var parameter in method.Parameters.Where(p => BindsFile(p, types)))
        {
            context.ReportDiagnostic(Diagnostic.Create(Rules.UploadsReader, parameter.Locations.FirstOrDefault(), $"Binding '{parameter.Type.ToDisplayString(SymbolDisplayFormat.MinimallyQualifiedFormat)} {parameter.Name}'"));
        }
    }

    // The parameter is a file, or a [FromForm]/[AsParameters] type with a file among its public properties.
    private static bool BindsFile(IParameterSymbol parameter, Types types) =>
        IsFileParameter(parameter.Type, types)
        || (parameter.GetAttributes().Any(a => a.AttributeClass?.Name is "FromFormAttribute" or "AsParametersAttribute")
            && parameter.Type.GetMembers().OfType<IPropertySymbol>().Any(p => !p.IsStatic && p.DeclaredAccessibility == Accessibility.Public && IsFileParameter(p.Type, types)));

    private static bool IsFileParameter(ITypeSymbol type, Types types) =>
        SymbolEqualityComparer.Default.Equals(type, types.FormFile) || SymbolEqualityComparer.Default.Equals(type, types.FormFileCollection)
        || (type is IArrayTypeSymbol array && SymbolEqualityComparer.Default.Equals(array.ElementType, types.FormFile))
        || (type is INamedTypeSymbol { IsGenericType: true } named && named.TypeArguments.Length == 1 && SymbolEqualityComparer.Default.Equals(named.TypeArguments[0], types.FormFile));

    private sealed class Types(Compilation compilation)
    {
        public INamedTypeSymbol? FormFile { get; } = compilation.GetTypeByMetadataName("Microsoft.AspNetCore.Http.IFormFile");
        public INamedTypeSymbol? FormFileCollection { get; } = compilation.GetTypeByMetadataName("Microsoft.AspNetCore.Http.IFormFileCollection");
        public INamedTypeSymbol? FormCollection { get; } = compilation.GetTypeByMetadataName("Microsoft.AspNetCore.Http.IFormCollection");
        public INamedTypeSymbol? HttpRequest { get; } = compilation.GetTypeByMetadataName("Microsoft.AspNetCore.Http.HttpRequest");
        public INamedTypeSymbol? EndpointRouteBuilderExtensions { get; } = compilation.GetTypeByMetadataName("Microsoft.AspNetCore.Builder.EndpointRouteBuilderExtensions");
        public INamedTypeSymbol? ControllerBase { get; } = compilation.GetTypeByMetadataName("Microsoft.AspNetCore.Mvc.ControllerBase");
    }
}
