#include "lower/guard_bound.h"

#include "ir/affine.h"
#include "ir/functor.h"
#include "lower/vector_tiles.h"

namespace ingot {
namespace {

// For `a < b` with b - a = limit - v (limit free of v): the limit, so that the conjunct reads v < limit.
std::optional<Expr> bound_on(const Expr& conjunct, const std::string& v) {
  auto* c = conjunct.as<CompareNode>();
  if (!c || c->op != CompareOp::kLT) return std::nullopt;
  std::optional<AffineForm> limit = as_affine(c->b - c->a);
  if (!limit) return std::nullopt;
  auto it = limit->coeffs.find(v);
  if (it == limit->coeffs.end() || it->second != -1) return std::nullopt;
  limit->coeffs.erase(it);
  return to_expr(*limit);
}

}  // namespace

std::optional<GuardBound> guard_bound(const ForNode* loop) {
  if (loop->loop_kind != LoopKind::kVectorized || !safe_to_simd(loop)) return std::nullopt;
  auto* guard = as<IfThenElseNode>(single_statement(loop->body));
  if (!guard || guard->else_case) return std::nullopt;
  std::vector<Expr> parts;
  conjuncts(guard->cond, parts);
  GuardBound bound;
  for (const Expr& part : parts) {
    if (std::optional<Expr> limit = bound_on(part, loop->name())) {
      bound.limits.push_back(*limit);
    } else {
      bound.remaining = bound.remaining ? logical_and(bound.remaining, part) : part;
    }
  }
  if (bound.limits.empty() && uses_var(bound.remaining, loop->name())) return std::nullopt;
  bound.guard = guard;
  return bound;
}

}  // namespace ingot
