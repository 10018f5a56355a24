// Latency of the six paper models under the four fusion strategies (unfused, rules, subgraph, global) on this
// CPU, each with the same fixed schedules (space/strategy_schedule.h), with the kernels and bytes each moves.
// Sizes: the paper's by default; INGOT_BENCH_SIZE=small for the test-size variants. Every program is compiled
// and checked against the interpreter before its timing loop starts; a wrong program is reported, not timed.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <map>
#include <memory>

#include "analysis/strategies.h"
#include "codegen/pipeline.h"
#include "compile/cpp_compiler.h"
#include "compile/kernel_module.h"
#include "interp/interpreter.h"
#include "lower/kernels.h"
#include "space/strategy_schedule.h"
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

// A strategy's program compiled and checked once: Google Benchmark calls the benchmark function once per
// repetition, and a paper-size unfused LSTM takes a minute to compile.
struct PreparedStrategy {
  LoopFunction function;
  CompiledLibrary library;
  std::unique_ptr<KernelModule> module;
  std::vector<HostTensor> outputs;
  std::vector<const HostTensor*> in;
  std::vector<HostTensor*> out;
  std::string error;  // a wrong answer: not timed
};

PreparedStrategy& prepared(const std::string& model, const std::string& strategy) {
  static std::map<std::string, std::unique_ptr<PreparedStrategy>> cache;
  std::unique_ptr<PreparedStrategy>& p = cache[model + "/" + strategy];
  if (p) return *p;
  static const Target cpu = resolve_target("cpu");
  const ModelCase& c = model_case(model);
  p = std::make_unique<PreparedStrategy>();
  p->function = lower_program(c.program, make_strategy_program(c.program, strategy, cpu).schedule);
  p->library = compile_cpp(cpp_source(p->function).source);
  p->module = std::make_unique<KernelModule>(p->library.path, p->function);
  for (const Buffer& b : p->function.inputs) p->in.push_back(&c.inputs.at(b->name));
  for (const Buffer& b : p->function.outputs) p->outputs.emplace_back(b->dtype, b->shape);
  for (HostTensor& t : p->outputs) p->out.push_back(&t);
  p->module->run(p->in, p->out);
  for (size_t n = 0; n < p->outputs.size() && p->error.empty(); ++n) {
    const HostTensor& want = c.expected.at(p->function.outputs[n]->name);
    Comparison check = compare(p->outputs[n], want, 1e-4, 1e-5 * magnitude(want));
    if (!check.ok) p->error = "wrong answer: " + check.message;
  }
  return *p;
}

void BM_Strategy(benchmark::State& state, const std::string& model, const std::string& strategy) {
  PreparedStrategy& p = prepared(model, strategy);
  if (!p.error.empty()) {
    state.SkipWithError(p.error.c_str());
    return;
  }
  for (auto _ : state) p.module->run(p.in, p.out);
  KernelTraffic traffic = kernel_traffic(p.function);
  state.counters["kernels"] = double(traffic.kernel_count());
  state.counters["MB_moved"] = double(traffic.bytes_moved()) / 1e6;
  state.counters["compile_s"] = p.library.compile_seconds;
  state.SetLabel(model + " " + strategy);
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
