using System.Composition;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CodeFixes;
using Microsoft.CodeAnalysis.CSharp;
using Microsoft.CodeAnalysis.CSharp.Syntax;
using Microsoft.CodeAnalysis.Simplification;

namespace HttpPerf.Analyzers.CodeFixes;

/// <summary>
/// HP0001's fix for a string read whole and then parsed: <c>JsonSerializer.Deserialize&lt;T&gt;(await
/// content.ReadAsStringAsync(ct), options)</c> becomes <c>await content.ReadFromJsonAsync&lt;T&gt;(options, ct)</c>, which
/// parses the content as it is read. Offered only where the analyzer found it mechanical: System.Text.Json, the string
/// used nowhere else, and options or type info a ReadFromJsonAsync overload takes. No options become
/// JsonSerializerOptions.Default, since ReadFromJsonAsync's own default is the web options (camelCase, case-insensitive).
/// Page: docs/pitfalls/Frontend.CatalogClient.md.
/// </summary>
[ExportCodeFixProvider(LanguageNames.CSharp, Name = nameof(ReadFromJsonFix)), Shared]
public sealed class ReadFromJsonFix() : LessonFix(RuleIds.CatalogClient, RuleIds.FixReadFromJson, "Read with ReadFromJsonAsync")
{
    // One rewrite removes a declaration another may also need: fixed one at a time.
    public override FixAllProvider? GetFixAllProvider() => null;

    // The diagnostic is on the Deserialize call; its additional location is the read.
    protected override async Task<Document> ApplyAsync(Document document, Diagnostic diagnostic, CancellationToken cancellationToken)
    {
        var root = await document.GetSyntaxRootAsync(cancellationToken).ConfigureAwait(false);
        if (diagnostic.AdditionalLocations.Count != 1
            || root?.FindNode(diagnostic.AdditionalLocations[0].SourceSpan, getInnermostNodeForTie: true).FirstAncestorOrSelf<InvocationExpressionSyntax>() is not { Expression: MemberAccessExpressionSyntax { Name.Identifier.ValueText: "ReadAsStringAsync" } readAccess } read
            || read.FirstAncestorOrSelf<AwaitExpressionSyntax>() is not { } awaited)
        {
            return document;
        }

        // Where the string goes: straight into Deserialize, or into a local that Deserialize takes.
        LocalDeclarationStatementSyntax? declaration = null;
        InvocationExpressionSyntax? deserialize;
        if (awaited.Parent is ArgumentSyntax { Parent: ArgumentListSyntax { Parent: InvocationExpressionSyntax outer } })
        {
            deserialize = outer;
        }
        else if (awaited.Parent is EqualsValueClauseSyntax { Parent: VariableDeclaratorSyntax declarator } && declarator.FirstAncestorOrSelf<LocalDeclarationStatementSyntax>() is { Declaration.Variables.Count: 1 } local)
        {
            declaration = local;
            var name = declarator.Identifier.ValueText;
            deserialize = local.Parent?.DescendantNodes().OfType<InvocationExpressionSyntax>().FirstOrDefault(i =>
                i.ArgumentList.Arguments.FirstOrDefault()?.Expression is IdentifierNameSyntax { Identifier.ValueText: var used } && used == name);
        }
        else
        {
            return document;
        }

        if (deserialize is null)
        {
            return document;
        }

        // ReadFromJsonAsync<T>(options, ct) or ReadFromJsonAsync(typeInfo, ct); the cancellation token is the read's.
        var typeArguments = deserialize.Expression is MemberAccessExpressionSyntax { Name: GenericNameSyntax generic } ? generic.TypeArgumentList : null;
        var options = deserialize.ArgumentList.Arguments.Count > 1
            ? deserialize.ArgumentList.Arguments[1].WithNameColon(null)
            : SyntaxFactory.Argument(SyntaxFactory.ParseExpression("global::System.Text.Json.JsonSerializerOptions.Default").WithAdditionalAnnotations(Simplifier.Annotation));
        var arguments = SyntaxFactory.SeparatedList(new[] { options }.Concat(read.ArgumentList.Arguments.Select(a => a.WithNameColon(null))));
        SimpleNameSyntax method = typeArguments is null
            ? SyntaxFactory.IdentifierName("ReadFromJsonAsync")
            : SyntaxFactory.GenericName(SyntaxFactory.Identifier("ReadFromJsonAsync"), typeArguments);
        ExpressionSyntax call = SyntaxFactory.InvocationExpression(SyntaxFactory.MemberAccessExpression(SyntaxKind.SimpleMemberAccessExpression, readAccess.Expression, method), SyntaxFactory.ArgumentList(arguments));
        if (awaited.Expression is InvocationExpressionSyntax { Expression: MemberAccessExpressionSyntax { Name.Identifier.ValueText: "ConfigureAwait" } configure } configured && configure.Expression == read)
        {
            call = configured.WithExpression(configure.WithExpression(call));
        }

        var replacement = SyntaxFactory.AwaitExpression(call).WithTriviaFrom(deserialize);
        SyntaxNode newRoot;
        if (declaration is null)
        {
            newRoot = root.ReplaceNode(deserialize, replacement);
        }
        else
        {
            // The local's declaration goes: the string it held is no longer made.
            var tracked = root.TrackNodes(deserialize, declaration);
            tracked = tracked.ReplaceNode(tracked.GetCurrentNode(deserialize)!, replacement);
            newRoot = tracked.RemoveNode(tracked.GetCurrentNode(declaration)!, SyntaxRemoveOptions.KeepNoTrivia)!;
        }

        if (newRoot is CompilationUnitSyntax unit && !await HasJsonUsingAsync(document, unit, cancellationToken).ConfigureAwait(false))
        {
            newRoot = unit.AddUsings(SyntaxFactory.UsingDirective(SyntaxFactory.ParseName("System.Net.Http.Json")));
        }

        return document.WithSyntaxRoot(newRoot);
    }

    // ReadFromJsonAsync is an extension in System.Net.Http.Json: imported by this file, or globally (the Web SDK's implicit usings).
    private static async Task<bool> HasJsonUsingAsync(Document document, CompilationUnitSyntax unit, CancellationToken cancellationToken)
    {
        static bool Imports(UsingDirectiveSyntax u) => u.Name?.ToString().Replace("global::", "") == "System.Net.Http.Json";
        if (unit.Usings.Any(Imports))
        {
            return true;
        }

        var compilation = await document.Project.GetCompilationAsync(cancellationToken).ConfigureAwait(false);
        return compilation?.SyntaxTrees.Any(t => t.GetRoot(cancellationToken) is CompilationUnitSyntax other && other.Usings.Any(u => u.GlobalKeyword.IsKind(SyntaxKind.GlobalKeyword) && Imports(u))) == true;
    }
}
