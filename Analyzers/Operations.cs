using System.Collections.Generic;
using System.Linq;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.Operations;

namespace HttpPerf.Analyzers;

/// <summary>What the rules ask of an operation tree: where a value came from, where it goes, and what surrounds a call.</summary>
internal static class Operations
{
    /// <summary>The value under conversions, parentheses, await and ConfigureAwait.</summary>
    public static IOperation Unwrap(IOperation operation)
    {
        while (true)
        {
            switch (operation)
            {
                case IConversionOperation conversion:
                    operation = conversion.Operand;
                    break;
                case IParenthesizedOperation parenthesized:
                    operation = parenthesized.Operand;
                    break;
                case IAwaitOperation awaited:
                    operation = awaited.Operation;
                    break;
                case IInvocationOperation { TargetMethod.Name: "ConfigureAwait", Instance: { } task }:
                    operation = task;
                    break;
                default:
                    return operation;
            }
        }
    }

    /// <summary>The operation a value was made by: itself, or, for a local, every value assigned to it in its method.</summary>
    public static IEnumerable<IOperation> Origins(IOperation value)
    {
        var unwrapped = Unwrap(value);
        if (unwrapped is not ILocalReferenceOperation local)
        {
            yield return unwrapped;
            yield break;
        }

        foreach (var assigned in AssignedTo(local.Local, Root(value)))
        {
            yield return Unwrap(assigned);
        }
    }

    /// <summary>The values a local is initialized or assigned with within <paramref name="root"/>.</summary>
    public static IEnumerable<IOperation> AssignedTo(ILocalSymbol local, IOperation root)
    {
        foreach (var operation in root.DescendantsAndSelf())
        {
            switch (operation)
            {
                case IVariableDeclaratorOperation declarator when SymbolEqualityComparer.Default.Equals(declarator.Symbol, local) && declarator.Initializer is { } initializer:
                    yield return initializer.Value;
                    break;
                case ISimpleAssignmentOperation { Target: ILocalReferenceOperation target } assignment when SymbolEqualityComparer.Default.Equals(target.Local, local):
                    yield return assignment.Value;
                    break;
            }
        }
    }

    /// <summary>The local a value is stored in when it is a local's initializer or the right side of its assignment.</summary>
    public static ILocalSymbol? StoredIn(IOperation value)
    {
        var operation = Wrapped(value);
        return operation.Parent switch
        {
            IVariableInitializerOperation { Parent: IVariableDeclaratorOperation declarator } => declarator.Symbol,
            ISimpleAssignmentOperation { Target: ILocalReferenceOperation target } assignment when assignment.Value == operation => target.Local,
            _ => null,
        };
    }

    /// <summary>Where a value is used: every operation that reads it (itself, or each read of the local it is stored in).</summary>
    public static IEnumerable<IOperation> Uses(IOperation value)
    {
        if (StoredIn(value) is not { } local)
        {
            yield return value;
            yield break;
        }

        foreach (var reference in Root(value).Descendants().OfType<ILocalReferenceOperation>())
        {
            if (SymbolEqualityComparer.Default.Equals(reference.Local, local) && !IsAssignmentTarget(reference))
            {
                yield return reference;
            }
        }
    }

    /// <summary>The argument or creation a value is handed to, through conversions and awaits.</summary>
    public static IOperation? Consumer(IOperation value)
    {
        var operation = Wrapped(value);
        return operation.Parent is IArgumentOperation argument ? argument.Parent : null;
    }

    /// <summary>The method body (or field initializer, or top-level statements) an operation belongs to.</summary>
    public static IOperation Root(IOperation operation)
    {
        while (operation.Parent is { } parent)
        {
            operation = parent;
        }

        return operation;
    }

    /// <summary>The nearest lambda or local function around an operation, else its method body.</summary>
    public static IOperation Scope(IOperation operation)
    {
        for (var current = operation.Parent; current is not null; current = current.Parent)
        {
            if (current is IAnonymousFunctionOperation or ILocalFunctionOperation)
            {
                return current;
            }
        }

        return Root(operation);
    }

    /// <summary>True when <paramref name="type"/> is <paramref name="baseType"/> or derives from it.</summary>
    public static bool IsOrDerives(ITypeSymbol? type, INamedTypeSymbol? baseType)
    {
        for (var current = type; current is not null && baseType is not null; current = current.BaseType)
        {
            if (SymbolEqualityComparer.Default.Equals(current.OriginalDefinition, baseType))
            {
                return true;
            }
        }

        return false;
    }

    /// <summary>The receiver of a call: its instance, or an extension method's first argument.</summary>
    public static IOperation? Receiver(IInvocationOperation invocation) =>
        invocation.Instance ?? (invocation.TargetMethod.IsExtensionMethod && invocation.Arguments.Length > 0 ? invocation.Arguments.FirstOrDefault(a => a.Parameter?.Ordinal == 0)?.Value : null);

    /// <summary>The value passed for the parameter at <paramref name="ordinal"/>, if any.</summary>
    public static IOperation? Argument(IInvocationOperation invocation, int ordinal) =>
        invocation.Arguments.FirstOrDefault(a => a.Parameter?.Ordinal == ordinal)?.Value;

    /// <summary>True for a property of <paramref name="type"/> (or a type derived from it) named <paramref name="name"/>.</summary>
    public static bool IsProperty(IOperation operation, INamedTypeSymbol? type, string name) =>
        Unwrap(operation) is IPropertyReferenceOperation property && property.Property.Name == name && IsOrDerives(property.Property.ContainingType, type);

    // The inverse of Unwrap: the outermost conversion, parenthesis, await or ConfigureAwait around a value.
    private static IOperation Wrapped(IOperation value)
    {
        var operation = value;
        while (operation.Parent is IConversionOperation or IAwaitOperation or IParenthesizedOperation
            || operation.Parent is IInvocationOperation { TargetMethod.Name: "ConfigureAwait" })
        {
            operation = operation.Parent;
        }

        return operation;
    }

    private static bool IsAssignmentTarget(IOperation reference) =>
        reference.Parent is IAssignmentOperation assignment && assignment.Target == reference;
}
