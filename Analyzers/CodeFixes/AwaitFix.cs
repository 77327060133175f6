using System.Composition;
using System.Threading;
using System.Threading.Tasks;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CodeFixes;
using Microsoft.CodeAnalysis.CSharp;
using Microsoft.CodeAnalysis.CSharp.Syntax;

namespace HttpPerf.Analyzers.CodeFixes;

/// <summary>
/// HP0009's fix in an async function: <c>task.Result</c> and <c>task.GetAwaiter().GetResult()</c> become
/// <c>await task</c>, and <c>content.ReadAsStream(...)</c> becomes <c>await content.ReadAsStreamAsync(...)</c>, so the
/// thread goes back to the pool while the network answers. Offered only where the analyzer found the function async;
/// elsewhere its callers must become async first, which is no mechanical rewrite. Page: docs/pitfalls/Frontend.Blocking.md.
/// </summary>
[ExportCodeFixProvider(LanguageNames.CSharp, Name = nameof(AwaitFix)), Shared]
public sealed class AwaitFix() : LessonFix(RuleIds.Blocking, RuleIds.FixAwait, "Await it")
{
    protected override async Task<Document> ApplyAsync(Document document, Diagnostic diagnostic, CancellationToken cancellationToken)
    {
        var root = await document.GetSyntaxRootAsync(cancellationToken).ConfigureAwait(false);
        var node = root?.FindNode(diagnostic.Location.SourceSpan, getInnermostNodeForTie: true);
        ExpressionSyntax? replaced = node switch
        {
            // task.Result
            MemberAccessExpressionSyntax { Name.Identifier.ValueText: "Result" } result => result,
            // task.GetAwaiter().GetResult(), content.ReadAsStream(...)
            InvocationExpressionSyntax invocation => invocation,
            _ => node?.FirstAncestorOrSelf<InvocationExpressionSyntax>(),
        };
        ExpressionSyntax? awaited = replaced switch
        {
            MemberAccessExpressionSyntax { Expression: var task } => task,
            InvocationExpressionSyntax { Expression: MemberAccessExpressionSyntax { Name.Identifier.ValueText: "GetResult", Expression: InvocationExpressionSyntax { Expression: MemberAccessExpressionSyntax { Name.Identifier.ValueText: "GetAwaiter", Expression: var task } } } } => task,
            InvocationExpressionSyntax { Expression: MemberAccessExpressionSyntax { Name.Identifier.ValueText: "ReadAsStream" } access } read =>
                read.WithExpression(access.WithName(SyntaxFactory.IdentifierName("ReadAsStreamAsync"))),
            _ => null,
        };
        if (root is null || replaced is null || awaited is null)
        {
            return document;
        }

        var awaitExpression = SyntaxFactory.AwaitExpression(awaited.WithoutTrivia());
        // (await x).Member where the wait was followed by more: parenthesized, as the compiler needs.
        ExpressionSyntax replacement = replaced.Parent is MemberAccessExpressionSyntax or ElementAccessExpressionSyntax or InvocationExpressionSyntax
            ? SyntaxFactory.ParenthesizedExpression(awaitExpression)
            : awaitExpression;
        return document.WithSyntaxRoot(root.ReplaceNode(replaced, replacement.WithTriviaFrom(replaced)));
    }
}
