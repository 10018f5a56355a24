// A split's tail guard as a loop bound: when a loop's whole body is one condition, its conjuncts `v + rest < limit`
// (the loop variable v with coefficient 1, rest free of v: how lowering writes a split's tail guard) can end the loop
// early instead of being tested in every iteration. The C++ printer prints them so in a vectorized loop, where g++ 12
// would need masked loads and stores (and leaves the loop scalar for a load the lanes share, a strided access or a
// math call under the mask); the cost model's features follow the printer. Use on lowered loop IR.
#pragma once

#include <optional>
#include <vector>

#include "ir/stmt.h"

namespace ingot {

struct GuardBound {
  std::vector<Expr> limits;  // the loop runs while its variable is below each of these (and its extent)
  Expr remaining;            // the other conjuncts in their order, all of which must hold; nullptr when none
  const IfThenElseNode* guard = nullptr;  // the condition, in the loop it was found in
};

// The bound conjuncts of the condition that is the whole body (a condition without an else branch) of a loop the
// printer prints `omp simd` (vectorized, safe_to_simd); std::nullopt for any other loop or body, or when no conjunct
// is such a bound and the condition uses the loop's variable. A condition that does not use it (a halo row's bound,
// tested in every element of the row) gives no limits and remains whole, for the printer to test around the loop.
std::optional<GuardBound> guard_bound(const ForNode* loop);

}  // namespace ingot
