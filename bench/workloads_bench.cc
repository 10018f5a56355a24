// Interpreter time for the small variant of each paper model (issue 4's bench): the reference every
// generated program of these models is checked against in tests and tuning runs.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "interp/interpreter.h"
#include "workloads/registry.h"

namespace ingot {
namespace {

const std::vector<std::string>& paper_models() {
  static const std::vector<std::string> names = {"lstm", "mmoe", "bert", "resnext", "swin", "efficientnet"};
  return names;
}

void BM_InterpretSmallModel(benchmark::State& state) {
  const std::string& name = paper_models()[size_t(state.range(0))];
  WorkloadParams params = find_workload(name)->small;
  Program program = make_workload(name, params);
  TensorMap inputs = random_inputs(program, 1, workload_input_ranges(name, params));
  for (auto _ : state) benchmark::DoNotOptimize(interpret(program, inputs));
  state.SetLabel(name + " small, " + std::to_string(program.computes().size()) + " computes");
}
BENCHMARK(BM_InterpretSmallModel)->DenseRange(0, 5)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace ingot
