using System.Reflection;
using BenchmarkDotNet.Attributes;
using Benchmarks;
using HttpPerf.Tests.Infrastructure;

namespace HttpPerf.Tests.Repository;

/// <summary>
/// Every benchmark runs once, at its smallest size, outside BenchmarkDotNet: they keep compiling and
/// working, and the ways each class compares return the same data. No timing is asserted.
/// </summary>
[Collection(Lanes.Processes)]
[Trait(Kind.Name, Kind.Repository)]
public sealed class BenchmarkSmokeTests
{
    public static TheoryData<string> BenchmarkClasses => new(typeof(JsonGetBenchmarks).Assembly.GetTypes()
        .Where(t => t.GetMethods().Any(m => m.GetCustomAttribute<BenchmarkAttribute>() is not null))
        .Select(t => t.FullName!)
        .Order());

    [Theory]
    [MemberData(nameof(BenchmarkClasses))]
    public async Task Each_benchmark_runs_once_at_its_smallest_size_and_the_ways_agree(string className)
    {
        var type = typeof(JsonGetBenchmarks).Assembly.GetType(className)!;
        var instance = Activator.CreateInstance(type)!;
        foreach (var parameter in type.GetProperties().Where(p => p.GetCustomAttribute<ParamsAttribute>() is not null))
        {
            parameter.SetValue(instance, parameter.GetCustomAttribute<ParamsAttribute>()!.Values.Min());
        }

        var benchmarks = type.GetMethods().Where(m => m.GetCustomAttribute<BenchmarkAttribute>() is not null).ToList();
        Assert.Single(benchmarks, m => m.GetCustomAttribute<BenchmarkAttribute>()!.Baseline);

        await InvokeAsync<GlobalSetupAttribute>(type, instance);
        var results = new Dictionary<string, object?>();
        try
        {
            foreach (var benchmark in benchmarks)
            {
                results[benchmark.Name] = await InvokeAsync(benchmark, instance);
                await InvokeAsync<IterationCleanupAttribute>(type, instance);
            }
        }
        finally
        {
            await InvokeAsync<GlobalCleanupAttribute>(type, instance);
        }

        // Methods answering the same question (same result type: items, or bytes) must agree, and not on zero.
        foreach (var sameKind in results.GroupBy(r => r.Value?.GetType()))
        {
            Assert.True(sameKind.Select(r => r.Value).Distinct().Count() == 1,
                $"{className} ways disagree: {string.Join(", ", sameKind.Select(r => $"{r.Key}={r.Value}"))}");
        }

        Assert.All(results, r => Assert.NotEqual(0L, Convert.ToInt64(r.Value, System.Globalization.CultureInfo.InvariantCulture)));
    }

    private static async Task InvokeAsync<TAttribute>(Type type, object instance) where TAttribute : Attribute
    {
        foreach (var method in type.GetMethods().Where(m => m.GetCustomAttribute<TAttribute>() is not null))
        {
            await InvokeAsync(method, instance);
        }
    }

    private static async Task<object?> InvokeAsync(MethodInfo method, object instance)
    {
        var result = method.Invoke(instance, null);
        if (result is not Task task)
        {
            return result;
        }

        await task;
        return task.GetType().GetProperty("Result")?.GetValue(task);
    }
}
