#include "costmodel/candidate_features.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "lower/kernels.h"
#include "lower/lower.h"
#include "lower/merge_parallel_stages.h"

namespace ingot {
namespace {

// The stage features whose raw values add up to a stage's operation count: what picks the heaviest stage.
std::vector<size_t> operation_columns() {
  std::vector<size_t> columns;
  const std::vector<std::string>& names = stage_feature_names();
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == "float_ops" || names[i] == "int_add_sub" || names[i] == "int_mul" || names[i] == "int_div_mod" ||
        names[i] == "int_compare_logic")
      columns.push_back(i);
  if (columns.empty()) throw std::logic_error("the stage features name no operation counts");
  return columns;
}

double raw(float logged) { return std::exp2(double(logged)) - 1; }

size_t stage_column(const std::string& name) {
  const std::vector<std::string>& names = stage_feature_names();
  auto it = std::find(names.begin(), names.end(), name);
  if (it == names.end()) throw std::logic_error("the stage features have no column " + name);
  return size_t(it - names.begin());
}

// Rough costs of one stage as the hardware sees it, which trees learn from few samples far better than from the
// counts they are made of: operations divided by the parallelism the target can use (threads, vector lanes), and
// cache lines moved divided by the threads that move them. Raw values (not logged).
struct StageEstimates {
  double compute = 0, lines = 0, unique_lines = 0, parallelism = 1, cycles = 0;
};

StageEstimates estimate_stage(const StageFeatures& stage) {
  static const size_t float_ops = stage_column("float_ops"), vectorized = stage_column("vectorized_float_ops"),
                      lanes = stage_column("vector_lanes"), parallel = stage_column("parallel_extent_product"),
                      gpu_threads = stage_column("gpu_thread_extent_product"),
                      gpu_blocks = stage_column("gpu_block_extent_product"), threads = stage_column("target_threads"),
                      int_add = stage_column("int_add_sub"), int_mul = stage_column("int_mul"),
                      int_div = stage_column("int_div_mod"), int_compare = stage_column("int_compare_logic"),
                      cycles = stage_column("estimated_cycles");
  static const std::vector<size_t> lines = [] {
    std::vector<size_t> columns;
    for (int slot = 0; slot < 5; ++slot) columns.push_back(stage_column("buf" + std::to_string(slot) + "_lines"));
    return columns;
  }();
  static const std::vector<size_t> unique_lines = [] {
    std::vector<size_t> columns;
    for (int slot = 0; slot < 5; ++slot)
      columns.push_back(stage_column("buf" + std::to_string(slot) + "_unique_lines"));
    return columns;
  }();
  const std::vector<float>& v = stage.values;
  StageEstimates e;
  const double loops = std::max({raw(v[parallel]), raw(v[gpu_threads]) * std::max(raw(v[gpu_blocks]), 1.0), 1.0});
  e.parallelism = std::clamp(loops, 1.0, std::max(raw(v[threads]), 1.0));
  const double flops = raw(v[float_ops]), vector_share = flops > 0 ? std::min(raw(v[vectorized]) / flops, 1.0) : 0;
  const double width = 1 + vector_share * (std::max(raw(v[lanes]), 1.0) - 1);
  const double integer_ops = raw(v[int_add]) + raw(v[int_mul]) + 4 * raw(v[int_div]) + raw(v[int_compare]);
  e.compute = (flops / width + integer_ops / 4) / e.parallelism;
  for (size_t c : lines) e.lines += raw(v[c]);
  for (size_t c : unique_lines) e.unique_lines += raw(v[c]);
  e.lines /= e.parallelism;
  // Threads run whole iterations of the parallel loops: 3 iterations on 2 threads take as long as 4.
  const double rounds = std::ceil(std::max(loops, 1.0) / std::max(raw(v[threads]), 1.0));
  e.cycles = raw(v[cycles]) * rounds / std::max(loops, 1.0);
  return e;
}
float logged(double value) { return float(std::log2(1 + std::max(value, 0.0))); }

}  // namespace

const std::vector<std::string>& candidate_feature_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> all;
    for (const char* prefix : {"sum.", "max.", "heaviest."})
      for (const std::string& name : stage_feature_names()) all.push_back(prefix + name);
    for (const char* estimate : {"estimated_compute", "estimated_lines", "estimated_unique_lines", "estimated_cost",
                                 "heaviest_parallelism", "estimated_parallel_cycles"})
      all.push_back(estimate);
    all.push_back("stages");
    all.push_back("kernels");
    return all;
  }();
  return names;
}

std::vector<float> aggregate_stage_features(const std::vector<StageFeatures>& stages, int64_t kernels) {
  static const std::vector<size_t> operations = operation_columns();
  const size_t width = stage_feature_names().size();
  std::vector<double> sums(width, 0);
  std::vector<float> maxima(width, 0);
  const StageFeatures* heaviest = nullptr;
  double heaviest_operations = -1;
  int64_t store_count = 0;
  StageEstimates total;
  for (const StageFeatures& stage : stages) {
    if (stage.values.size() != width)
      throw std::invalid_argument("a stage row of store '" + stage.store + "' has " +
                                  std::to_string(stage.values.size()) + " values; the feature set has " +
                                  std::to_string(width));
    store_count += stage.multiplicity;
    const StageEstimates e = estimate_stage(stage);
    total.compute += double(stage.multiplicity) * e.compute;
    total.lines += double(stage.multiplicity) * e.lines;
    total.unique_lines += double(stage.multiplicity) * e.unique_lines;
    total.cycles += double(stage.multiplicity) * e.cycles;
    for (size_t i = 0; i < width; ++i) {
      sums[i] += double(stage.multiplicity) * raw(stage.values[i]);
      maxima[i] = std::max(maxima[i], stage.values[i]);
    }
    double stage_operations = 0;
    for (size_t column : operations) stage_operations += raw(stage.values[column]);
    stage_operations *= double(stage.multiplicity);
    if (stage_operations > heaviest_operations) {
      heaviest_operations = stage_operations;
      heaviest = &stage;
    }
  }
  std::vector<float> row;
  row.reserve(candidate_feature_names().size());
  for (double sum : sums) row.push_back(logged(sum));
  row.insert(row.end(), maxima.begin(), maxima.end());
  if (heaviest) {
    row.insert(row.end(), heaviest->values.begin(), heaviest->values.end());
  } else {
    row.insert(row.end(), width, 0.0f);
  }
  row.push_back(logged(total.compute));
  row.push_back(logged(total.lines));
  row.push_back(logged(total.unique_lines));
  // A line from memory costs about as much as a few vector operations: one scale so the sum ranks by either.
  row.push_back(logged(total.compute + 4 * total.lines));
  row.push_back(logged(heaviest ? estimate_stage(*heaviest).parallelism : 0));
  row.push_back(logged(total.cycles));
  row.push_back(logged(double(store_count)));
  row.push_back(logged(double(kernels)));
  return row;
}

LoopFunction lower_as_compiled(const Program& program, const Schedule& schedule, const Target& target) {
  LoopFunction lowered = lower(program, schedule);
  return target.kind == TargetKind::kCpu ? merge_parallel_stages(lowered) : lowered;
}

std::vector<float> candidate_features(const Program& program, const Schedule& schedule, const Target& target) {
  LoopFunction function = lower_as_compiled(program, schedule, target);
  const int64_t kernels = int64_t(kernel_bodies(function.body).size());
  return aggregate_stage_features(extract_stage_features(function, target), kernels);
}

}  // namespace ingot
