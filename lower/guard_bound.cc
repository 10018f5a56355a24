#include "lower/guard_bound.h"

#include "ir/affine.h"
#include "ir/functor.h"
#include "lower/vector_tiles.h"

namespace ingot {
namespace {

// For `a < b` with a - b = v + rest (rest free of v): the limit -rest, so that the conjunct reads v < -rest.
std::optional<Expr> bound_on(const Expr& conjunct, const std::string& v) {
  auto* c = conjunct.as<CompareNode>();
  if (!c || c->op != CompareOp::kLT) return std::nullopt;
  std::optional<AffineForm> a = as_affine(c->a), b = as_affine(c->b);
  if (!a || !b) return std::nullopt;
  AffineForm limit;  // b - (a - v)
  limit.constant = b->constant - a->constant;
  limit.coeffs = b->coeffs;
  for (const auto& [name, coeff] : a->coeffs) limit.coeffs[name] -= coeff;
  auto it = limit.coeffs.find(v);
  if (it == limit.coeffs.end() || it->second != -1) return std::nullopt;
  limit.coeffs.erase(it);
  for (auto term = limit.coeffs.begin(); term != limit.coeffs.end();)
    term = term->second == 0 ? limit.coeffs.erase(term) : std::next(term);
  return to_expr(limit);
}

Stmt only_statement(const Stmt& body) {
  if (auto* seq = as<SeqNode>(body); seq && seq->stmts.size() == 1) return only_statement(seq->stmts[0]);
  return body;
}

}  // namespace

std::optional<GuardBound> guard_bound(const ForNode* loop) {
  auto* guard = as<IfThenElseNode>(only_statement(loop->body));
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
  if (bound.limits.empty()) return std::nullopt;
  bound.guard = guard;
  return bound;
}

}  // namespace ingot
