// Benchmarks of the core compiler: lowering + C++ emission per candidate, interpreter throughput, and a
// hand-scheduled 512^3 fp32 matmul against the naive lowering (one thread, as % of one core's fp32 peak).
// Everything is compiled before its timing loop starts.
#include <benchmark/benchmark.h>

#include <random>

#include "codegen/pipeline.h"
#include "compile/cpp_compiler.h"
#include "compile/kernel_module.h"
#include "interp/interpreter.h"
#include "space/hand_schedules.h"
#include "space/schedule_sampler.h"
#include "workloads/examples.h"

namespace ingot {
namespace {

// Measured fp32 FMA peak of one core of these machines (see docs/benchmarks.md).
constexpr double kOneCorePeakGflops = 235.0;

void BM_LowerAndEmitCpp(benchmark::State& state) {
  Program p = state.range(0) ? matmul_bias_relu(512, 512, 512) : two_gemm(128, 1024, 512, 512);
  std::mt19937_64 rng(42);
  std::vector<Schedule> schedules;
  for (int n = 0; n < 64; ++n) schedules.push_back(sample_schedule(p, rng));
  size_t n = 0, bytes = 0;
  for (auto _ : state) {
    std::string source = compile_to_cpp_source(p, schedules[n++ % schedules.size()]).source;
    bytes += source.size();
    benchmark::DoNotOptimize(source);
  }
  state.SetLabel(p.name());
  state.counters["candidates/s"] = benchmark::Counter(double(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["source_bytes"] = double(bytes) / double(state.iterations());
}
BENCHMARK(BM_LowerAndEmitCpp)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

void BM_Interpreter(benchmark::State& state) {
  Program p = state.range(0) == 0 ? matmul(256, 256, 256) : softmax(512, 512);
  TensorMap inputs = random_inputs(p, 1);
  double macs = state.range(0) == 0 ? 256.0 * 256 * 256 : 0;
  for (auto _ : state) benchmark::DoNotOptimize(interpret(p, inputs));
  state.SetLabel(p.name());
  if (macs > 0)
    state.counters["MAC/s"] = benchmark::Counter(macs * double(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Interpreter)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

void BM_Matmul512(benchmark::State& state) {
  Program p = matmul(512, 512, 512);
  Schedule s = state.range(0) ? hand_schedule(p) : Schedule();
  LoopFunction f = lower_program(p, s);
  CompiledLibrary lib = compile_cpp(cpp_source(f).source);
  KernelModule module(lib.path, f);
  module.set_num_threads(1);
  TensorMap inputs = random_inputs(p, 7);
  HostTensor out(DType::kFloat32, {512, 512});
  std::vector<const HostTensor*> in = {&inputs.at("A"), &inputs.at("B")};
  module.run(in, {&out});  // warm-up
  for (auto _ : state) module.run(in, {&out});
  double flops = 2.0 * 512 * 512 * 512;
  state.SetLabel(state.range(0) ? "hand schedule, 1 thread" : "naive lowering, 1 thread");
  state.counters["GFLOP/s"] =
      benchmark::Counter(flops * 1e-9 * double(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["%peak"] = benchmark::Counter(flops * 1e-9 * double(state.iterations()) * 100 / kOneCorePeakGflops,
                                               benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Matmul512)
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->MinTime(1.0)
    ->Repetitions(5)
    ->ReportAggregatesOnly(true);

}  // namespace
}  // namespace ingot

BENCHMARK_MAIN();
