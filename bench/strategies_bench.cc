// Latency of the six paper models under the four fusion strategies (unfused, rules, subgraph, global) on this
// CPU, each with the same fixed schedules (tuner/strategy_schedule.h), with the kernels and bytes each moves.
// Sizes: the paper's by default; INGOT_BENCH_SIZE=small for the test-size variants. Every program is compiled
// and checked against the interpreter before its timing loop starts; a wrong program is reported, not timed.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <map>

#include "analysis/strategies.h"
#include "codegen/cpp_compiler.h"
#include "codegen/cpp_printer.h"
#include "codegen/kernel_module.h"
#include "codegen/kernels.h"
#include "codegen/lower.h"
#include "ir/interpreter.h"
#include "tuner/strategy_schedule.h"
#include "workloads/registry.h"

namespace ingot {
namespace {

struct ModelCase {
  Program program;
  TensorMap inputs;
  TensorMap expected;
};

// The program, its inputs and the interpreter's outputs, made once per model (the paper-size interpreter runs
// take up to a minute or two).
const ModelCase& model_case(const std::string& model) {
  static std::map<std::string, ModelCase> cases;
  auto it = cases.find(model);
  if (it != cases.end()) return it->second;
  const char* size = std::getenv("INGOT_BENCH_SIZE");
  WorkloadParams params = size && std::string(size) == "small" ? find_workload(model)->small : WorkloadParams{};
  ModelCase c{make_workload(model, params), {}, {}};
  c.inputs = random_inputs(c.program, 1, workload_input_ranges(model, params));
  c.expected = interpret(c.program, c.inputs);
  return cases.emplace(model, std::move(c)).first->second;
}

void BM_Strategy(benchmark::State& state, const std::string& model, const std::string& strategy) {
  static const Target cpu = resolve_target("cpu");
  const ModelCase& c = model_case(model);
  StrategyProgram sp = make_strategy_program(c.program, strategy, cpu);
  LoopFunction f = lower(c.program, sp.schedule);
  CompiledLibrary lib = compile_cpp(print_cpp(f));
  KernelModule module(lib.path, f);
  std::vector<const HostTensor*> in;
  for (const Buffer& b : f.inputs) in.push_back(&c.inputs.at(b->name));
  std::vector<HostTensor> out;
  for (const Buffer& b : f.outputs) out.emplace_back(b->dtype, b->shape);
  std::vector<HostTensor*> out_ptrs;
  for (HostTensor& t : out) out_ptrs.push_back(&t);
  module.run(in, out_ptrs);
  for (size_t n = 0; n < out.size(); ++n) {
    Comparison check = compare(out[n], c.expected.at(f.outputs[n]->name));
    if (!check.ok) {
      state.SkipWithError(("wrong answer: " + check.message).c_str());
      return;
    }
  }
  for (auto _ : state) module.run(in, out_ptrs);
  KernelTraffic traffic = kernel_traffic(f);
  state.counters["kernels"] = double(traffic.kernel_count());
  state.counters["MB_moved"] = double(traffic.bytes_moved()) / 1e6;
  state.counters["compile_s"] = lib.compile_seconds;
  state.SetLabel(c.program.name() + " " + strategy);
}

const bool registered = [] {
  for (const char* model : {"lstm", "mmoe", "bert", "resnext", "efficientnet", "swin"})
    for (const std::string& strategy : plan_strategy_names())
      benchmark::RegisterBenchmark(("BM_Strategy/" + std::string(model) + "/" + strategy).c_str(), BM_Strategy, model,
                                   strategy)
          ->Unit(benchmark::kMillisecond)
          ->MinTime(2.0)
          ->Repetitions(3)
          ->ReportAggregatesOnly(true)
          ->UseRealTime();
  return true;
}();

}  // namespace
}  // namespace ingot
