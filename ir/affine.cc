#include "ir/affine.h"

#include <limits>

namespace ingot {

namespace {

// Adds scale * e to form; false when e is not affine or a coefficient overflows.
bool accumulate(const Expr& e, int64_t scale, AffineForm& form) {
  if (!e || !is_int(e.dtype())) return false;
  if (auto* imm = e.as<IntImmNode>()) {
    int64_t term;
    return !__builtin_mul_overflow(imm->value, scale, &term) &&
           !__builtin_add_overflow(form.constant, term, &form.constant);
  }
  if (auto* v = e.as<VarNode>()) {
    int64_t& c = form.coeffs[v->name];
    if (__builtin_add_overflow(c, scale, &c)) return false;
    if (c == 0) form.coeffs.erase(v->name);
    return true;
  }
  auto* n = e.as<BinaryNode>();
  if (!n) return false;
  switch (n->op) {
    case BinaryOp::kAdd: return accumulate(n->a, scale, form) && accumulate(n->b, scale, form);
    case BinaryOp::kSub: {
      int64_t negated;
      return !__builtin_mul_overflow(scale, int64_t{-1}, &negated) && accumulate(n->a, scale, form) &&
             accumulate(n->b, negated, form);
    }
    case BinaryOp::kMul: {
      // One side must reduce to a constant; the other is scaled by it.
      AffineForm lhs, rhs;
      if (!accumulate(n->a, 1, lhs) || !accumulate(n->b, 1, rhs)) return false;
      const AffineForm* constant_side = lhs.coeffs.empty() ? &lhs : rhs.coeffs.empty() ? &rhs : nullptr;
      if (!constant_side) return false;
      const Expr& other = constant_side == &lhs ? n->b : n->a;
      int64_t factor;
      if (__builtin_mul_overflow(scale, constant_side->constant, &factor)) return false;
      return accumulate(other, factor, form);
    }
    default: return false;
  }
}

}  // namespace

std::optional<AffineForm> as_affine(const Expr& e) {
  AffineForm form;
  if (!accumulate(e, 1, form)) return std::nullopt;
  return form;
}

Expr to_expr(const AffineForm& form) {
  Expr sum;
  for (const auto& [name, coeff] : form.coeffs) {
    if (coeff == 0) continue;
    Expr v = var(name);
    if (!sum) {
      sum = coeff == 1 ? v : v * int_imm(coeff);
    } else if (coeff > 0) {
      sum = sum + (coeff == 1 ? v : v * int_imm(coeff));
    } else if (coeff == std::numeric_limits<int64_t>::min()) {
      sum = sum + v * int_imm(coeff);
    } else {
      sum = sum - (coeff == -1 ? v : v * int_imm(-coeff));
    }
  }
  if (!sum) return int_imm(form.constant);
  if (form.constant > 0 || form.constant == std::numeric_limits<int64_t>::min()) return sum + int_imm(form.constant);
  if (form.constant < 0) return sum - int_imm(-form.constant);
  return sum;
}

}  // namespace ingot
