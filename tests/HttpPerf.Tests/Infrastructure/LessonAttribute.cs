using Xunit.v3;

namespace HttpPerf.Tests.Infrastructure;

/// <summary>
/// The lesson a test tests, as the trait <c>Lesson</c> whose value is the lesson's flag (one of <see cref="HttpPerf.ServiceDefaults.Contract.Pitfalls"/>'
/// constants), so one lesson's tests run alone (docs/contributing.md):
/// <c>dotnet test tests/HttpPerf.Tests --filter Lesson=Frontend.Grpc</c>. On a class it tags each of its tests; a test
/// that tests two lessons carries both.
/// </summary>
[AttributeUsage(AttributeTargets.Class | AttributeTargets.Method, AllowMultiple = true)]
public sealed class LessonAttribute(string flag) : Attribute, ITraitAttribute
{
    public const string Name = "Lesson";

    public string Flag { get; } = flag;

    public IReadOnlyCollection<KeyValuePair<string, string>> GetTraits() => [new(Name, Flag)];
}
