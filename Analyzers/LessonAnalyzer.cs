using System.Collections.Immutable;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.Diagnostics;

namespace HttpPerf.Analyzers;

/// <summary>
/// What every rule does the same: one descriptor, generated code left alone, concurrent, and its actions registered
/// per compilation, where it first looks up the types it knows the shape by (none registered when they are absent).
/// </summary>
public abstract class LessonAnalyzer(DiagnosticDescriptor rule) : DiagnosticAnalyzer
{
    protected DiagnosticDescriptor Rule { get; } = rule;

    public sealed override ImmutableArray<DiagnosticDescriptor> SupportedDiagnostics => [Rule];

    public sealed override void Initialize(AnalysisContext context)
    {
        context.ConfigureGeneratedCodeAnalysis(GeneratedCodeAnalysisFlags.None);
        context.EnableConcurrentExecution();
        context.RegisterCompilationStartAction(Start);
    }

    /// <summary>Registers the rule's actions for one compilation.</summary>
    protected abstract void Start(CompilationStartAnalysisContext context);
}
