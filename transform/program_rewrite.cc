#include "transform/program_rewrite.h"

#include <algorithm>

#include "analysis/access.h"
#include "ir/functor.h"
#include "ir/simplify.h"

namespace ingot {

Expr ProgramRewriter::rewrite_body(const Tensor& t) {
  struct ReadRewriter : ExprMutator {
    ProgramRewriter& owner;
    explicit ReadRewriter(ProgramRewriter& o) : owner(o) {}
    Expr mutate(const Expr& e) override {
      auto* r = e.as<TensorReadNode>();
      if (!r) return mutate_children(e);
      std::vector<Expr> indices;
      bool changed = false;
      for (const Expr& i : r->indices) {
        indices.push_back(mutate(i));
        changed |= !indices.back().same_as(i);
      }
      if (owner.hook_) {
        Expr replaced = owner.hook_(r->tensor, indices);
        if (replaced) return replaced;
      }
      Tensor target = owner.result(r->tensor);
      if (!changed && target.same_as(r->tensor)) return e;
      return read(target, std::move(indices));
    }
  } rewriter(*this);
  return t->body ? rewriter.mutate(t->body) : t->body;
}

void ProgramRewriter::set_result(const Tensor& original, Tensor result) {
  results_[original.get()] = std::move(result);
}

Tensor ProgramRewriter::result(const Tensor& original) const {
  auto it = results_.find(original.get());
  return it == results_.end() ? original : it->second;
}

Program ProgramRewriter::program_of(const Program& original) const {
  std::vector<Tensor> outputs;
  for (const Tensor& o : original.outputs()) outputs.push_back(result(o));
  return Program(outputs, original.name());
}

std::vector<std::string> axis_names(const Tensor& t) {
  std::vector<std::string> names;
  for (const IterVar& a : t->axes) names.push_back(a.name());
  if (const ReduceNode* r = t->reduction())
    for (const IterVar& k : r->axes) names.push_back(k.name());
  return names;
}

Tensor with_body(const Tensor& t, const Expr& body) {
  if (body.same_as(t->body)) return t;
  std::vector<std::string> names;
  for (const IterVar& a : t->axes) names.push_back(a.name());
  return compute(
      t->name, t->shape, [&](const std::vector<Expr>&) { return body; }, names);
}

std::string unique_name(const std::string& name, const std::vector<std::string>& taken) {
  auto is_taken = [&](const std::string& n) { return std::find(taken.begin(), taken.end(), n) != taken.end(); };
  if (!is_taken(name)) return name;
  for (int n = 1;; ++n)
    if (!is_taken(name + std::to_string(n))) return name + std::to_string(n);
}

Expr simplify_read_indices(const Expr& e, const Tensor& compute) {
  struct IndexSimplifier : ExprMutator {
    VarRanges ranges;
    Expr mutate(const Expr& x) override {
      auto* r = x.as<TensorReadNode>();
      if (!r) return mutate_children(x);
      std::vector<Expr> indices;
      bool changed = false;
      for (const Expr& i : r->indices) {
        indices.push_back(simplify(mutate(i), ranges));
        changed |= !structural_equal(indices.back(), i);
      }
      return changed ? read(r->tensor, std::move(indices)) : x;
    }
  } simplifier;
  simplifier.ranges = axis_ranges(compute);
  return simplifier.mutate(e);
}

}  // namespace ingot
