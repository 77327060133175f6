using BenchmarkDotNet.Configs;
using BenchmarkDotNet.Jobs;
using BenchmarkDotNet.Running;
using BenchmarkDotNet.Toolchains.InProcess.Emit;

// dotnet run -c Release --project Benchmarks -- [--short] [BenchmarkDotNet arguments, e.g. --filter *Json*]
// The default job gives the numbers in docs/results; --short (BenchmarkDotNet's ShortRun) is a quick look.
// In-process toolchain: the benchmarks host the services' own code on Kestrel in this process.
var shortRun = args.Contains("--short");
var job = (shortRun ? Job.ShortRun : Job.Default).WithToolchain(InProcessEmitToolchain.Instance);
var config = DefaultConfig.Instance.AddJob(job.AsDefault());
BenchmarkSwitcher.FromAssembly(typeof(Benchmarks.JsonGetBenchmarks).Assembly).Run(args.Where(a => a != "--short").ToArray(), config);
