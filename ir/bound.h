// Constant integer bounds of index expressions by interval arithmetic, given the ranges of the variables
// (loop variables run over [0, extent - 1]). Used by lowering (regions, guards) and by the simplifier.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "ir/expr.h"

namespace ingot {

struct IntRange {
  int64_t lo = 0;  // inclusive
  int64_t hi = 0;  // inclusive
  bool operator==(const IntRange& o) const { return lo == o.lo && hi == o.hi; }
};
using VarRanges = std::map<std::string, IntRange>;

// Bounds of an integer expression (+, -, *, floor / and %, min, max, select, casts between integer types),
// or std::nullopt when a variable has no range or a node is not integer arithmetic. Sound, not always tight.
std::optional<IntRange> const_bound(const Expr& e, const VarRanges& ranges);

}  // namespace ingot
