using System.Collections.Immutable;
using System.Threading;
using System.Threading.Tasks;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CodeActions;
using Microsoft.CodeAnalysis.CodeFixes;

namespace HttpPerf.Analyzers.CodeFixes;

/// <summary>
/// A fix offered for a rule's diagnostic only where the rule found the rewrite mechanical: it says so by naming the fix
/// in the diagnostic's properties (<see cref="RuleIds.FixKey"/>).
/// </summary>
public abstract class LessonFix(string ruleId, string fix, string title) : CodeFixProvider
{
    public sealed override ImmutableArray<string> FixableDiagnosticIds => [ruleId];

    public override FixAllProvider? GetFixAllProvider() => WellKnownFixAllProviders.BatchFixer;

    public sealed override Task RegisterCodeFixesAsync(CodeFixContext context)
    {
        foreach (var diagnostic in context.Diagnostics)
        {
            if (diagnostic.Properties.TryGetValue(RuleIds.FixKey, out var name) && name == fix)
            {
                context.RegisterCodeFix(CodeAction.Create(title, ct => ApplyAsync(context.Document, diagnostic, ct), equivalenceKey: fix), diagnostic);
            }
        }

        return Task.CompletedTask;
    }

    /// <summary>The rewritten document.</summary>
    protected abstract Task<Document> ApplyAsync(Document document, Diagnostic diagnostic, CancellationToken cancellationToken);
}
