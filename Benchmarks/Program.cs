using BenchmarkDotNet.Configs;
using BenchmarkDotNet.Jobs;
using BenchmarkDotNet.Running;
using BenchmarkDotNet.Toolchains.InProcess.Emit;

// dotnet run -c Release --project Benchmarks -- [--short] [BenchmarkDotNet arguments, e.g. --filter *Json*]
// The default job, capped at 20 measured and 10 warm-up iterations so the whole suite fits in about 40
// minutes on 2 cores, gives the numbers in docs/results; --short (BenchmarkDotNet's ShortRun) is a quick look.
// In-process toolchain: the benchmarks host the services' own code on Kestrel in this process.
var shortRun = args.Contains("--short");
var job = (shortRun ? Job.ShortRun : Job.Default.WithMaxIterationCount(20).WithMaxWarmupCount(10))
    .WithToolchain(InProcessEmitToolchain.Instance);
var config = DefaultConfig.Instance.AddJob(job.AsDefault());
BenchmarkSwitcher.FromAssembly(typeof(Benchmarks.JsonGetBenchmarks).Assembly).Run(args.Where(a => a != "--short").ToArray(), config);
