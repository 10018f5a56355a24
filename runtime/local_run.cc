#include "runtime/local_run.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "codegen/pipeline.h"
#include "compile/kernel_module.h"
#include "runtime/repeat_timing.h"

namespace ingot {

LocalRunResult local_run(const Program& program, const Schedule& schedule, const TensorMap& inputs,
                         const TensorMap& expected, const LocalRunOptions& options) {
  LocalRunResult result;
  result.function = lower_program(program, schedule);
  result.library = compile_cpp(cpp_source(result.function).source, options.compile);
  KernelModule module(result.library.path, result.function);
  if (options.threads > 0) module.set_num_threads(options.threads);

  std::vector<const HostTensor*> in;
  for (const Tensor& t : program.placeholders()) {
    auto it = inputs.find(t->name);
    if (it == inputs.end()) throw std::invalid_argument("no input tensor for placeholder '" + t->name + "'");
    in.push_back(&it->second);
  }
  std::vector<HostTensor> outputs;
  for (const Tensor& t : program.outputs()) outputs.emplace_back(t->dtype, t->shape);
  std::vector<HostTensor*> out;
  for (HostTensor& t : outputs) out.push_back(&t);

  module.run(in, out);
  result.correct = true;
  for (size_t n = 0; n < outputs.size(); ++n) {
    const std::string& name = program.outputs()[n]->name;
    auto it = expected.find(name);
    if (it == expected.end()) throw std::invalid_argument("no expected tensor for output '" + name + "'");
    result.checks.push_back(compare(outputs[n], it->second, options.rtol, options.atol * magnitude(it->second)));
    result.correct &= result.checks.back().ok;
  }
  if (!result.correct) return result;

  result.seconds = time_repeats([&] { module.run(in, out); },
                                {options.warmup_runs, options.min_repeat_ms, options.min_repeats, options.max_repeats});
  result.statistics = run_statistics(result.seconds);
  return result;
}

}  // namespace ingot
