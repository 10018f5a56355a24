#include "transform/two_phase_reduction.h"

#include <algorithm>
#include <stdexcept>
#include <unordered_map>

#include "analysis/strategies.h"
#include "ir/functor.h"
#include "transform/program_rewrite.h"

namespace ingot {

namespace {

[[noreturn]] void reject(const std::string& tensor, const std::string& reason) {
  throw std::invalid_argument("split_reduction: '" + tensor + "' " + reason);
}

// Output elements the target needs to be busy (see two_phase_candidates).
int64_t fill_elements(const Target& target) {
  if (target.kind == TargetKind::kGpu)
    return target.gpu.sm_count * GpuBlockEstimate::kThreadsPerBlock * GpuBlockEstimate::kOutputsPerThread;
  return target.cpu.cores * target.cpu.simd_fp32_lanes;
}

int64_t output_units(int64_t elements, const Target& target) {
  if (target.kind == TargetKind::kGpu) {
    const int64_t per_block = GpuBlockEstimate::kThreadsPerBlock * GpuBlockEstimate::kOutputsPerThread;
    return (elements + per_block - 1) / per_block;
  }
  return elements;
}

int64_t available_units(const Target& target) {
  return target.kind == TargetKind::kGpu ? target.gpu.sm_count : target.cpu.cores * target.cpu.simd_fp32_lanes;
}

}  // namespace

size_t split_axis(const ReduceNode& reduction) {
  size_t best = 0;
  for (size_t k = 1; k < reduction.axes.size(); ++k)
    if (reduction.axes[k].extent > reduction.axes[best].extent) best = k;
  return best;
}

std::string partial_name(const std::string& tensor) { return tensor + "_partial"; }

namespace {

// Checks that tensor can be split by factor in program; returns the tensor.
Tensor checked_split(const Program& program, const std::string& tensor, int64_t factor) {
  Tensor t = program.find(tensor);
  if (!t || t->is_placeholder()) reject(tensor, "is not a compute of program '" + program.name() + "'");
  const ReduceNode* r = t->reduction();
  if (!r) reject(tensor, "has no reduction to split");
  const IterVar& k = r->axes[split_axis(*r)];
  if (factor < 1 || factor > k.extent)
    reject(tensor, "cannot be split by factor " + std::to_string(factor) + ": the factor must be in [1, " +
                       std::to_string(k.extent) + "] (the extent of reduce axis '" + k.name() + "')");
  if (program.find(partial_name(tensor)))
    reject(tensor, "cannot be split: the name '" + partial_name(tensor) + "' is taken");
  return t;
}

// The final reduction that replaces t, reading a new partial tensor (t's reads already rewritten).
Tensor split_tensor(const Tensor& t, int64_t factor) {
  const ReduceNode* r = t->reduction();
  const size_t s = split_axis(*r);
  const IterVar& k = r->axes[s];
  const int64_t extent = k.extent;
  const int64_t chunks = (extent + factor - 1) / factor;
  std::vector<std::string> taken = axis_names(t);
  const std::string outer = unique_name(k.name() + "_o", taken);
  taken.push_back(outer);
  const std::string inner = unique_name(k.name() + "_i", taken);
  Expr ko = var(outer);
  IterVar ki = reduce_axis(factor, inner);
  Expr step = ko * factor + ki.var;
  Expr source = substitute(r->source, {{k.name(), step}});
  if (extent % factor != 0) source = select(lt(step, extent), source, identity_element(r->op, source.dtype()));
  std::vector<IterVar> partial_axes = r->axes;
  partial_axes[s] = ki;

  std::vector<std::string> names;
  for (const IterVar& a : t->axes) names.push_back(a.name());
  std::vector<std::string> partial_names = names;
  partial_names.push_back(outer);
  std::vector<int64_t> partial_shape = t->shape;
  partial_shape.push_back(chunks);
  Tensor partial = compute(
      partial_name(t->name), partial_shape,
      [&](const std::vector<Expr>&) { return reduce(r->op, source, partial_axes); }, partial_names);

  IterVar kc = reduce_axis(chunks, outer);
  return compute(
      t->name, t->shape,
      [&](const std::vector<Expr>& i) {
        std::vector<Expr> at = i;
        at.push_back(kc.var);
        return reduce(r->op, partial(at), {kc});
      },
      names);
}

}  // namespace

Program split_reductions(const Program& program, const std::vector<std::pair<std::string, int64_t>>& splits) {
  std::unordered_map<const TensorNode*, int64_t> factor_of;
  for (const auto& [name, factor] : splits) {
    Tensor t = checked_split(program, name, factor);
    if (!factor_of.emplace(t.get(), factor).second) reject(name, "is split twice");
  }
  // One pass: a split tensor keeps its name, so its readers (other splits included) only need redirecting.
  ProgramRewriter rewriter;
  for (const Tensor& t : program.tensors()) {
    if (t->is_placeholder()) continue;
    Tensor rewritten = with_body(t, rewriter.rewrite_body(t));
    auto it = factor_of.find(t.get());
    rewriter.set_result(t, it == factor_of.end() ? rewritten : split_tensor(rewritten, it->second));
  }
  return rewriter.program_of(program);
}

Program split_reduction(const Program& program, const std::string& tensor, int64_t factor) {
  return split_reductions(program, {{tensor, factor}});
}

bool is_two_phase_candidate(const TeAnalysis& te, const Target& target, const TwoPhaseOptions& options) {
  const ReduceNode* r = te.tensor->reduction();
  return r && te.te_class == TeClass::kManyToMany && r->axes[split_axis(*r)].extent >= options.min_reduction &&
         output_units(te.tensor->num_elements(), target) < available_units(target);
}

std::vector<std::string> two_phase_candidates(const ProgramAnalysis& analysis, const Target& target,
                                              const TwoPhaseOptions& options) {
  std::vector<std::string> names;
  for (const TeAnalysis& te : analysis.tes)
    if (is_two_phase_candidate(te, target, options)) names.push_back(te.tensor->name);
  return names;
}

int64_t two_phase_factor(const TeAnalysis& te, const Target& target) {
  const ReduceNode* r = te.tensor->reduction();
  if (!r) throw std::invalid_argument("two_phase_factor: '" + te.tensor->name + "' has no reduction");
  const int64_t extent = r->axes[split_axis(*r)].extent;
  constexpr int64_t kMinChunk = 32;
  if (extent < 2 * kMinChunk) return extent;
  const int64_t elements = std::max<int64_t>(te.tensor->num_elements(), 1);
  int64_t chunks = (fill_elements(target) + elements - 1) / elements;
  chunks = std::clamp<int64_t>(chunks, 2, extent / kMinChunk);
  return (extent + chunks - 1) / chunks;
}

Program split_candidates(const Program& program, const Target& target, const TwoPhaseOptions& options) {
  ProgramAnalysis analysis = analyze(program, target);
  std::vector<std::pair<std::string, int64_t>> splits;
  for (const TeAnalysis& te : analysis.tes)
    if (is_two_phase_candidate(te, target, options)) splits.emplace_back(te.tensor->name, two_phase_factor(te, target));
  return split_reductions(program, splits);
}

}  // namespace ingot
