#include "runtime/local_run.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

#include "codegen/pipeline.h"
#include "compile/kernel_module.h"
#include "runtime/repeat_timing.h"

namespace ingot {

namespace {

// Each interval's median time over the runs: in a run's marks, kernel k's intervals lie between its marks, one more
// than it has intervals.
std::vector<double> median_interval_seconds(const std::vector<StageInterval>& intervals,
                                            const std::vector<std::vector<double>>& runs) {
  std::vector<std::vector<double>> samples(intervals.size());
  for (const std::vector<double>& marks : runs) {
    size_t mark = 0;
    for (size_t n = 0; n < intervals.size(); ++n) {
      if (n > 0 && intervals[n].kernel != intervals[n - 1].kernel) ++mark;  // the kernel's end mark
      if (mark + 1 >= marks.size())
        throw std::runtime_error("the profiled program made " + std::to_string(marks.size()) +
                                 " profile marks, fewer than its stage intervals need");
      samples[n].push_back(marks[mark + 1] - marks[mark]);
      ++mark;
    }
  }
  std::vector<double> medians;
  for (std::vector<double>& s : samples) medians.push_back(s.empty() ? 0.0 : run_statistics(s).median);
  return medians;
}

}  // namespace

LocalRunResult local_run(const Program& program, const Schedule& schedule, const TensorMap& inputs,
                         const TensorMap& expected, const LocalRunOptions& options) {
  LocalRunResult result;
  result.function = lower_program(program, schedule);
  // Prepared once: the printer prints it and, when profiling, its stage intervals are what the marks bound.
  PipelineOptions printing;
  printing.cpp.profile = options.profile;
  const LoopFunction prepared = prepare_for_cpu(result.function, printing);
  result.library = compile_cpp(print_cpp_with_lines(prepared, printing.cpp).source, options.compile);
  if (options.profile) result.intervals = stage_intervals(prepared);
  KernelModule module(result.library.path, result.function);
  if (options.threads > 0) module.set_num_threads(options.threads);

  std::vector<const HostTensor*> in;
  for (const Tensor& t : program.placeholders()) {
    auto it = inputs.find(t->name);
    if (it == inputs.end()) throw std::invalid_argument("no input tensor for placeholder '" + t->name + "'");
    in.push_back(&it->second);
  }
  std::vector<HostTensor> packed;
  const auto pack_started = std::chrono::steady_clock::now();
  in = pack_inputs(result.function, in, packed);
  result.pack_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - pack_started).count();
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
    result.checks.push_back(compare(outputs[n], it->second, options.rtol,
                                    absolute_tolerance(options.atol, it->second, name, options.rounding_noise)));
    result.correct &= result.checks.back().ok;
  }
  if (!result.correct) return result;

  std::vector<std::vector<double>> marks;            // per run, warm-up runs first
  if (options.profile) module.read_profile_marks();  // the check's run
  result.seconds = time_repeats(
      [&] {
        module.run(in, out);
        if (options.profile) marks.push_back(module.read_profile_marks());
      },
      {options.warmup_runs, options.min_repeat_ms, options.min_repeats, options.max_repeats});
  result.statistics = run_statistics(result.seconds);
  if (options.profile) {
    marks.erase(marks.begin(),
                marks.begin() + std::min<std::ptrdiff_t>(options.warmup_runs, std::ptrdiff_t(marks.size())));
    result.interval_seconds = median_interval_seconds(result.intervals, marks);
  }
  return result;
}

}  // namespace ingot
