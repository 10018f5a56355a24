// The simplifier's table of rewrite rules (pattern -> result, if condition), in the style of Halide's
// rewriter. Only the simplifier uses it: it calls apply_rewrite_rules on each node whose children are
// already simplified, and supplies bounds and the constructors that simplify the nodes a result builds.
#pragma once

#include <optional>

#include "ir/bound.h"
#include "ir/expr.h"

namespace ingot {

// What a rule needs from the simplifier running it.
class RewriteContext {
 public:
  virtual ~RewriteContext() = default;
  // Bounds of an integer expression (std::nullopt when unknown).
  virtual std::optional<IntRange> bound(const Expr& e) = 0;
  // Bounds of a - b for integers; tighter than subtracting bounds when a and b share terms.
  virtual std::optional<IntRange> difference_bound(const Expr& a, const Expr& b) = 0;
  // Build a node from simplified operands and simplify it.
  virtual Expr make_binary(BinaryOp op, Expr a, Expr b) = 0;
  virtual Expr make_compare(CompareOp op, Expr a, Expr b) = 0;
  virtual Expr make_logical(LogicalOp op, Expr a, Expr b) = 0;
  virtual Expr make_not(Expr a) = 0;
  virtual Expr make_select(Expr cond, Expr true_value, Expr false_value) = 0;
};

// Rewrites e by the first rule whose pattern matches e's root and whose condition holds; returns a null Expr
// when no rule applies.
Expr apply_rewrite_rules(const Expr& e, RewriteContext& ctx);

}  // namespace ingot
