#include "transform/vertical_fusion.h"

#include <unordered_map>

#include "ir/flops.h"
#include "ir/functor.h"
#include "transform/program_rewrite.h"

namespace ingot {

namespace {

// True when every read of producer inside reader's body reads the same element (structurally equal indices).
bool reads_one_element(const Tensor& reader, const Tensor& producer) {
  std::vector<Expr> first;
  bool seen = false, same = true;
  for_each_node(reader->body, [&](const Expr& e) {
    auto* r = e.as<TensorReadNode>();
    if (!r || !r->tensor.same_as(producer)) return;
    if (!seen) {
      first = r->indices;
      seen = true;
      return;
    }
    for (size_t d = 0; d < first.size(); ++d) same = same && structural_equal(first[d], r->indices[d]);
  });
  return same;
}

// Whether t (whose producers are already folded into new_body) folds into its readers.
bool should_fold(const Program& program, const Tensor& t, const Expr& new_body, const VerticalFusionOptions& options) {
  if (t->reduction() || program.is_output(t)) return false;
  std::vector<Tensor> readers = program.consumers(t);
  if (readers.empty()) return false;
  if (flops_per_evaluation(new_body) == 0) return options.fold_data_movement;
  if (!options.fold_arithmetic || readers.size() != 1) return false;
  const Tensor& reader = readers[0];
  return !reader->reduction() && reader->num_elements() <= t->num_elements() && reads_one_element(reader, t);
}

}  // namespace

Program fold_vertical(const Program& program, const VerticalFusionOptions& options, FoldReport* report) {
  // Rewritten bodies of the folded tensors; a read of one becomes its body at the read's indices.
  std::unordered_map<const TensorNode*, Expr> folded_body;
  Tensor reader;  // the compute being rewritten: folded reads are simplified in its axis ranges
  ProgramRewriter rewriter([&](const Tensor& original, const std::vector<Expr>& indices) -> Expr {
    auto it = folded_body.find(original.get());
    if (it == folded_body.end()) return Expr();
    std::unordered_map<std::string, Expr> at;
    for (size_t d = 0; d < original->axes.size(); ++d) at[original->axes[d].name()] = indices[d];
    return simplify_read_indices(substitute(it->second, at), reader);
  });
  if (report) report->folded.clear();
  for (const Tensor& t : program.tensors()) {
    if (t->is_placeholder()) continue;
    reader = t;
    Expr body = rewriter.rewrite_body(t);
    if (should_fold(program, t, body, options)) {
      folded_body[t.get()] = body;
      if (report) report->folded.push_back(t->name);
      continue;
    }
    rewriter.set_result(t, with_body(t, body));
  }
  return rewriter.program_of(program);
}

std::vector<std::string> vertical_fold_candidates(const Program& program, const VerticalFusionOptions& options) {
  FoldReport report;
  fold_vertical(program, options, &report);
  return report.folded;
}

}  // namespace ingot
