// Test support for the bound and simplifier property tests: an evaluator of integer index expressions with
// floor division, and a generator of random ones over a few variables with small ranges.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <iterator>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "ir/bound.h"
#include "ir/expr.h"

namespace ingot::testing {

using Env = std::map<std::string, int64_t>;

inline int64_t floor_div_ref(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

inline int64_t floor_mod_ref(int64_t a, int64_t b) { return a - b * floor_div_ref(a, b); }

// The value of an integer or bool expression (bool as 0 or 1); throws on division by zero or unknown nodes.
inline int64_t eval_int(const Expr& e, const Env& env) {
  switch (e.kind()) {
    case ExprKind::kIntImm: return e.as<IntImmNode>()->value;
    case ExprKind::kVar: return env.at(e.as<VarNode>()->name);
    case ExprKind::kBinary: {
      auto* n = e.as<BinaryNode>();
      int64_t a = eval_int(n->a, env), b = eval_int(n->b, env);
      switch (n->op) {
        case BinaryOp::kAdd: return a + b;
        case BinaryOp::kSub: return a - b;
        case BinaryOp::kMul: return a * b;
        case BinaryOp::kDiv:
          if (b == 0) throw std::domain_error("division by zero");
          return floor_div_ref(a, b);
        case BinaryOp::kMod:
          if (b == 0) throw std::domain_error("modulo by zero");
          return floor_mod_ref(a, b);
        case BinaryOp::kMin: return std::min(a, b);
        case BinaryOp::kMax: return std::max(a, b);
      }
      break;
    }
    case ExprKind::kCompare: {
      auto* n = e.as<CompareNode>();
      int64_t a = eval_int(n->a, env), b = eval_int(n->b, env);
      switch (n->op) {
        case CompareOp::kLT: return a < b;
        case CompareOp::kLE: return a <= b;
        case CompareOp::kGT: return a > b;
        case CompareOp::kGE: return a >= b;
        case CompareOp::kEQ: return a == b;
        case CompareOp::kNE: return a != b;
      }
      break;
    }
    case ExprKind::kLogical: {
      auto* n = e.as<LogicalNode>();
      bool a = eval_int(n->a, env) != 0, b = eval_int(n->b, env) != 0;
      return n->op == LogicalOp::kAnd ? (a && b) : (a || b);
    }
    case ExprKind::kNot: return eval_int(e.as<NotNode>()->a, env) == 0;
    case ExprKind::kSelect: {
      auto* n = e.as<SelectNode>();
      return eval_int(n->cond, env) != 0 ? eval_int(n->true_value, env) : eval_int(n->false_value, env);
    }
    case ExprKind::kCast: {
      auto* n = e.as<CastNode>();
      int64_t v = eval_int(n->value, env);
      if (n->dtype == DType::kInt32) return int64_t(int32_t(uint32_t(uint64_t(v))));
      if (n->dtype == DType::kBool) return v != 0;
      return v;
    }
    default: break;
  }
  throw std::invalid_argument("eval_int cannot evaluate " + to_string(e));
}

// Calls fn with every assignment of the variables within their (inclusive) ranges.
inline void for_each_assignment(const VarRanges& ranges, const std::function<void(const Env&)>& fn) {
  Env env;
  std::vector<std::pair<std::string, IntRange>> vars(ranges.begin(), ranges.end());
  std::function<void(size_t)> rec = [&](size_t i) {
    if (i == vars.size()) return fn(env);
    for (int64_t v = vars[i].second.lo; v <= vars[i].second.hi; ++v) {
      env[vars[i].first] = v;
      rec(i + 1);
    }
  };
  rec(0);
}

// Random i64 expressions in the shapes lowering produces (sums of scaled variables, floor div and mod by
// constants, min, max, select), plus arbitrary nesting. Divisors are non-zero constants of either sign.
class RandomIntExprs {
 public:
  // dtype: of the variables and constants (i64 or i32).
  RandomIntExprs(uint64_t seed, std::vector<std::string> vars, DType dtype = DType::kInt64)
      : rng_(seed), vars_(std::move(vars)), dtype_(dtype) {}

  Expr next(int depth) {
    if (depth <= 0 || pick(0, 5) == 0) return leaf();
    switch (pick(0, 12)) {
      case 0:
      case 1: return next(depth - 1) + next(depth - 1);
      case 2: return next(depth - 1) - next(depth - 1);
      case 3: return next(depth - 1) * constant();
      case 4: return next(depth - 1) * next(depth - 1);
      case 5: return next(depth - 1) / imm(divisor());
      case 6: return next(depth - 1) % imm(divisor());
      case 7: {
        // (a * c + b) / d and % d with c a multiple or divisor of d: the split and fused axis shapes.
        int64_t d = divisor();
        int64_t c = pick(0, 1) ? d * pick(-2, 2) : (d % 2 == 0 ? d / 2 : d);
        Expr inner = next(depth - 1) * imm(c) + next(depth - 1);
        return pick(0, 1) ? inner / imm(d) : inner % imm(d);
      }
      case 8: {
        Expr a = next(depth - 1);
        int64_t d = divisor();
        return (a / imm(d)) * imm(d) + a % imm(d);
      }
      case 9: return minimum(next(depth - 1), next(depth - 1));
      case 10: return maximum(next(depth - 1), next(depth - 1));
      case 11: return select(condition(depth - 1), next(depth - 1), next(depth - 1));
      default: return (next(depth - 1) / imm(divisor())) / imm(divisor());
    }
  }

  Expr condition(int depth) {
    switch (pick(0, 4)) {
      case 0: return lt(next(depth), next(depth));
      case 1: return le(next(depth), constant());
      case 2: return eq(next(depth), next(depth));
      case 3: return logical_and(lt(next(depth), constant()), ne(next(depth), next(depth)));
      default: return logical_not(ge(next(depth), next(depth)));
    }
  }

  // Small ranges, some straddling zero, so that floor semantics matter.
  VarRanges ranges() {
    VarRanges r;
    for (const std::string& v : vars_) {
      int64_t lo = pick(0, 2) == 0 ? pick(-6, 0) : 0;
      r[v] = IntRange{lo, lo + pick(0, 6)};
    }
    return r;
  }

  int64_t pick(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng_); }

 private:
  Expr leaf() {
    if (pick(0, 3) == 0) return constant();
    return var(vars_[pick(0, int64_t(vars_.size()) - 1)], dtype_);
  }
  Expr imm(int64_t v) const { return int_imm(v, dtype_); }
  Expr constant() { return imm(pick(-9, 9)); }
  int64_t divisor() {
    static const int64_t kDivisors[] = {1, 2, 3, 4, 8, 16, -1, -2, -3, -4, 5, 6};
    return kDivisors[pick(0, int64_t(std::size(kDivisors)) - 1)];
  }

  std::mt19937_64 rng_;
  std::vector<std::string> vars_;
  DType dtype_;
};

}  // namespace ingot::testing
