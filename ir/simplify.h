// The simplifier: rewrites expressions by a table of rules (constant folding, identities such as x * 1 and
// x + 0, canonical affine order, div/mod of affine forms given variable ranges) until nothing changes.
// Safe to run at any point; lowering runs it on every index it creates.
#pragma once

#include "ir/bound.h"
#include "ir/expr.h"
#include "ir/stmt.h"

namespace ingot {

// Simplifies an expression; ranges (inclusive) enable rules that need bounds, such as
// (i_o * 32 + i_i) / 32 -> i_o when i_i is in [0, 31].
Expr simplify(const Expr& e, const VarRanges& ranges = {});

// Simplifies every expression of a statement, knowing each loop variable's range inside its loop; an if
// whose condition folds to a constant keeps only the branch taken.
Stmt simplify(const Stmt& s, const VarRanges& ranges = {});

}  // namespace ingot
