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
/// HP0001's fix for GetAsync/SendAsync: pass HttpCompletionOption.ResponseHeadersRead, so the call returns at the
/// headers and the content is read from the socket as it is deserialized. Offered only where the response is disposed
/// by a using (the analyzer checks): a response read at its headers holds its connection until it is disposed.
/// Page: docs/pitfalls/Frontend.CatalogClient.md.
/// </summary>
[ExportCodeFixProvider(LanguageNames.CSharp, Name = nameof(ResponseHeadersReadFix)), Shared]
public sealed class ResponseHeadersReadFix() : LessonFix(RuleIds.CatalogClient, RuleIds.FixResponseHeadersRead, "Pass HttpCompletionOption.ResponseHeadersRead")
{
    protected override async Task<Document> ApplyAsync(Document document, Diagnostic diagnostic, CancellationToken cancellationToken)
    {
        var root = await document.GetSyntaxRootAsync(cancellationToken).ConfigureAwait(false);
        if (root?.FindNode(diagnostic.Location.SourceSpan, getInnermostNodeForTie: true).FirstAncestorOrSelf<InvocationExpressionSyntax>() is not { } invocation)
        {
            return document;
        }

        var option = SyntaxFactory.Argument(SyntaxFactory.ParseExpression("global::System.Net.Http.HttpCompletionOption.ResponseHeadersRead").WithAdditionalAnnotations(Simplifier.Annotation));
        var arguments = invocation.ArgumentList.Arguments;
        // GetAsync(uri, completionOption, cancellationToken), SendAsync(request, completionOption, cancellationToken).
        arguments = arguments.Any(a => a.NameColon is not null)
            ? arguments.Add(option.WithNameColon(SyntaxFactory.NameColon("completionOption")))
            : arguments.Insert(1, option);
        return document.WithSyntaxRoot(root.ReplaceNode(invocation, invocation.WithArgumentList(invocation.ArgumentList.WithArguments(arguments))));
    }
}
